"""Credentials (kubeconfig, in-cluster), the resource catalogue and checkpoints."""

from __future__ import annotations

import base64
import os
import stat
import sys
from pathlib import Path

import pytest
import yaml

from recorder.checkpoint import Checkpoint, CheckpointStore
from recorder.kube import config as kconfig
from recorder.kube.catalogue import DEFAULT_KINDS, CatalogueError, Target, parse_kinds
from recorder.kube.config import ConfigError, load_config


def write_kubeconfig(path: Path, *, current: str = "a", users: dict | None = None) -> Path:
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [
            {"name": "ca", "cluster": {"server": "https://127.0.0.1:6443/",
                                      "certificate-authority-data": base64.b64encode(b"CA").decode()}},
            {"name": "cb", "cluster": {"server": "https://b.example:443",
                                      "certificate-authority": "certs/ca.crt"}},
        ],
        "contexts": [{"name": "a", "context": {"cluster": "ca", "user": "ua"}},
                     {"name": "b", "context": {"cluster": "cb", "user": "ub"}}],
        "users": [{"name": k, "user": v} for k, v in (users or {
            "ua": {"client-certificate-data": base64.b64encode(b"CERT").decode(),
                   "client-key-data": base64.b64encode(b"KEY").decode()},
            "ub": {"token": "t0k"}}).items()],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_current_context_with_inline_client_certificate(tmp_path: Path) -> None:
    cfg = load_config(str(write_kubeconfig(tmp_path / "kc")))
    assert cfg.server == "https://127.0.0.1:6443" and cfg.context == "a" and cfg.ca_data == b"CA"
    assert Path(cfg.cert_file).read_bytes() == b"CERT"
    assert stat.S_IMODE(os.stat(cfg.key_file).st_mode) == 0o600
    cfg.cleanup()
    assert not os.path.exists(cfg.cert_file)


def test_context_option_and_relative_paths(tmp_path: Path) -> None:
    cfg = load_config(str(write_kubeconfig(tmp_path / "kc")), context="b")
    assert cfg.token() == "t0k" and cfg.ca_file == str(tmp_path / "certs" / "ca.crt")
    with pytest.raises(ConfigError, match="context 'nope' is not in the kubeconfig"):
        load_config(str(tmp_path / "kc"), context="nope")


def test_kubeconfig_env_merges_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = write_kubeconfig(tmp_path / "one", current="b", users={"ub": {"token": "first"}})
    second = write_kubeconfig(tmp_path / "two", current="a")
    monkeypatch.setenv("KUBECONFIG", f"{first}{os.pathsep}{second}")
    cfg = load_config()
    assert cfg.context == "b" and cfg.token() == "first"


def test_exec_plugin_token(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import json, os\nprint(json.dumps({'kind': 'ExecCredential', "
                      "'status': {'token': os.environ['T']}}))\n")
    users = {"ua": {"exec": {"command": sys.executable, "args": [str(plugin)],
                             "env": [{"name": "T", "value": "from-plugin"}]}}}
    cfg = load_config(str(write_kubeconfig(tmp_path / "kc", users=users)))
    assert cfg.token() == "from-plugin"


def test_in_cluster_service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text("sa-token\n")
    (tmp_path / "ca.crt").write_text("CA")
    monkeypatch.setattr(kconfig, "SERVICE_ACCOUNT_DIR", tmp_path)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    cfg = load_config()
    assert cfg.server == "https://10.0.0.1:443" and cfg.token() == "sa-token"
    assert cfg.ca_file == str(tmp_path / "ca.crt")


def test_no_credentials_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="no kubeconfig found"):
        load_config()
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(str(tmp_path / "missing"))


def test_kinds() -> None:
    assert parse_kinds(()) == list(DEFAULT_KINDS)
    assert parse_kinds(("nodes,pods", "Events")) == ["pods", "events", "nodes"]
    with pytest.raises(CatalogueError, match="secrets are never recorded"):
        parse_kinds(("pods,secrets",))
    with pytest.raises(CatalogueError, match="unknown kind\\(s\\) widgets"):
        parse_kinds(("widgets",))


def test_target_paths() -> None:
    pods = Target("pods", "", "v1", "Pod", True, None)
    leases = Target("leases", "coordination.k8s.io", "v1", "Lease", True, "kube-node-lease")
    assert pods.path == "/api/v1/pods" and pods.api_version == "v1"
    assert leases.path == "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    assert leases.key == "leases.coordination.k8s.io.kube-node-lease"


def test_checkpoint_round_trip_and_scope(tmp_path: Path) -> None:
    store = CheckpointStore(str(tmp_path), "c|https://x|kafka:b/p")
    assert store.load("pods.core._all") is None
    store.save("pods.core._all", Checkpoint("42", 7, {"u1": ["40", "ns", "a"]}))
    loaded = store.load("pods.core._all")
    assert loaded == Checkpoint("42", 7, {"u1": ["40", "ns", "a"]})
    assert not list(tmp_path.glob("*.tmp"))
    assert CheckpointStore(str(tmp_path), "other").load("pods.core._all") is None
    (tmp_path / "pods.core._all.checkpoint.json").write_text("{not json")
    assert store.load("pods.core._all") is None
