"""Rollout races, capacity dips and rollouts on recordings of the real control plane."""

from __future__ import annotations

from tests.replayer_data import rows

RACE_PODS = ["web-857bb4bd9d-84bp4", "web-857bb4bd9d-99vfd", "web-857bb4bd9d-rpzcr"]
GRACEFUL_PODS = ["web-6848dfbcdb-l7lbt", "web-6848dfbcdb-vw5fw", "web-6848dfbcdb-xn27x"]
VERDICTS = ("SELECT namespace, pod, verdict, off_state FROM races_with(?) "
            "ORDER BY namespace, pod")


def test_old_pods_that_stopped_before_their_endpoint_went_off(recorded):
    assert rows(recorded, VERDICTS, 1.0) == (
        [("graceful", p, "ok", "serving") for p in GRACEFUL_PODS]
        + [("race", p, "stopped_before_endpoint_off", "absent") for p in RACE_PODS])


def test_exposure_is_the_time_from_containers_stopping_to_the_endpoint_going_off(recorded):
    for exposed, stopped, off in rows(recorded, "SELECT exposed_s, containers_stopped_at, "
                                                "endpoint_off_at FROM races WHERE namespace = 'race'"):
        assert exposed == (off - stopped).total_seconds()
        assert 1.5 < exposed < 2.5  # the endpointslice controller batches for 2 s


def test_a_wide_dataplane_margin_flags_the_graceful_rollout_too(recorded):
    # graceful pods stopped about 1.1 s after their endpoints turned terminating
    assert {v for _, _, v, _ in rows(recorded, VERDICTS, 3.0)} == {
        "within_margin", "stopped_before_endpoint_off"}


def test_the_distribution_suggests_a_prestop_delay(recorded):
    pods, raced, margin, ok, unknown, p50, *_, suggested = rows(
        recorded, "SELECT * FROM race_summary_with(1.0)")[0]
    assert (pods, raced, margin, ok, unknown, suggested) == (6, 3, 0, 3, 0, 3)
    assert 1.5 < p50 < 2.5


def test_imported_captures_reach_the_same_verdicts(imported):
    assert rows(imported, VERDICTS, 1.0) == (
        [("graceful", p, "ok", "serving") for p in GRACEFUL_PODS]
        + [("race", p, "stopped_before_endpoint_off", "absent") for p in RACE_PODS])


def test_capacity_dips_when_a_node_is_lost_under_a_deployment(evicted):
    assert rows(evicted, "SELECT namespace, service, deployment, desired, min_ready, pods_off "
                         "FROM capacity_dips ORDER BY namespace") == [
        ("graceful", "web", "web", 3, 1, ["web-76947d6dcf-2xgbx", "web-76947d6dcf-vtqjc"]),
        ("race", "web", "web", 3, 2, ["web-6b47756fff-gdwqw"]),
    ]


def test_no_capacity_dip_in_a_surge_only_rollout(recorded):
    assert rows(recorded, "SELECT * FROM capacity_dips") == []


def test_rollouts_per_revision(recorded):
    assert rows(recorded, "SELECT namespace, deployment, revision, desired, surge_observed, "
                          "old_pods_terminating, new_pods_ready FROM rollouts "
                          "WHERE revision = '2' ORDER BY namespace") == [
        ("graceful", "web", "2", 3, 1, 3, 3),
        ("race", "web", "2", 3, 1, 3, 3),
    ]
