"""The typed tables of the kinds recorded for storage and disruptions — Services,
PodDisruptionBudgets, StorageClasses — on Kubernetes' own fixtures of them
(tests/data/kube-api, every field set)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from replayer import db
from tests.replayer_data import load_captures, rows

FIXTURES = Path(__file__).parent / "data" / "kube-api" / "fixtures.json"


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    con = load_captures(str(tmp_path_factory.mktemp("kube-api") / "api.duckdb"), [str(FIXTURES)])
    yield con
    con.close()


def test_a_service_has_its_type_and_selector(con: duckdb.DuckDBPyConnection):
    assert rows(con, "SELECT type, selector FROM services") == [
        ("typeValue", {"selectorKey": "selectorValue"})]


def test_a_disruption_budget_has_its_selector_bounds_and_status(con: duckdb.DuckDBPyConnection):
    assert rows(con, "SELECT selector, match_expressions, selects_all, min_available, max_unavailable, "
                     "disruptions_allowed, current_healthy, desired_healthy, expected_pods "
                     "FROM disruption_budgets") == [
        ({"matchLabelsKey": "matchLabelsValue"},
         [{"key": "keyValue", "operator": "operatorValue", "values": ["valuesValue"]}], False,
         "minAvailableValue", "maxUnavailableValue", 3, 4, 5, 6)]
    assert rows(con, "SELECT c.type, c.status, c.reason FROM conditions c "
                     "WHERE c.kind = 'PodDisruptionBudget'") == [
        ("typeValue", "statusValue", "reasonValue")]


def test_a_storage_class_has_its_provisioner_and_modes(con: duckdb.DuckDBPyConnection):
    assert rows(con, "SELECT provisioner, binding_mode, reclaim_policy, is_default "
                     "FROM storage_classes") == [
        ("provisionerValue", "volumeBindingModeValue", "reclaimPolicyValue", False)]


def test_a_missing_class_is_read_from_the_storage_class_list(tmp_path: Path):
    """Given a claim of class `fast` whose PV controller says it is not found (a public
    capture) and a cluster whose recorded StorageClasses are only the fixture's `nameValue`:
    the finding names the class and the list it is missing from."""
    claim = Path(__file__).parent / "data" / "public" / "pvc-storage-class-missing-1.json"
    con = load_captures(str(tmp_path / "classes.duckdb"), [str(claim), str(FIXTURES)])
    try:
        assert rows(con, "SELECT top_cause, causes[1].detail FROM problems "
                         "WHERE kind = 'PersistentVolumeClaim'") == [
            ("storage_class_missing", 'StorageClass "fast" does not exist (the StorageClasses: '
             'nameValue) — ProvisioningFailed: storageclass.storage.k8s.io "fast" not found (×39)')]
    finally:
        con.close()


def test_a_label_selector_is_evaluated_as_kubernetes_does(tmp_path: Path):
    """label_selector_matches against apimachinery's semantics (labels.Selector): matchLabels
    and every expression must hold; NotIn and DoesNotExist hold where the label is unset;
    an empty selector selects everything."""
    con = db.open_db(str(tmp_path / "empty.duckdb"))
    labels = {"app": "web", "tier": "backend"}

    def expr(key: str, operator: str, *values: str) -> dict:
        return {"key": key, "operator": operator, "values": list(values)}

    cases = [
        ({"app": "web"}, [], True), ({"app": "api"}, [], False),
        ({}, [expr("tier", "In", "backend", "cache")], True), ({}, [expr("tier", "In", "cache")], False),
        ({}, [expr("tier", "NotIn", "backend")], False), ({}, [expr("zone", "NotIn", "a")], True),
        ({}, [expr("tier", "Exists")], True), ({}, [expr("zone", "Exists")], False),
        ({}, [expr("tier", "DoesNotExist")], False), ({}, [expr("zone", "DoesNotExist")], True),
        ({"app": "web"}, [expr("tier", "In", "cache")], False), (None, None, True),
    ]
    try:
        said = [con.execute("SELECT label_selector_matches(?::MAP(VARCHAR, VARCHAR), "
                            "?::STRUCT(\"key\" VARCHAR, operator VARCHAR, \"values\" VARCHAR[])[], "
                            "?::MAP(VARCHAR, VARCHAR))", [match, exprs, labels]).fetchone()[0]
                for match, exprs, _ in cases]
    finally:
        con.close()
    assert said == [expected for _, _, expected in cases]
