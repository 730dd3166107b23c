"""Where the API server is and how to authenticate: kubeconfig files or in-cluster credentials.

Follows kubectl's rules: ``--kubeconfig`` or the ``KUBECONFIG`` path list (first file that
sets a value wins) or ``~/.kube/config``; ``--context`` or ``current-context``; relative file
paths resolve against the file that names them. Inside a pod, the ServiceAccount token, CA and
the ``KUBERNETES_SERVICE_*`` variables are used when no kubeconfig exists.
"""

from __future__ import annotations

import base64
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import orjson
import yaml

from schemas.errors import KtraceError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class ConfigError(KtraceError):
    """No usable credentials: a missing or malformed kubeconfig, an unknown context."""


@dataclass
class ClusterConfig:
    """Everything a connection needs. Token sources are callables so rotating tokens
    (projected ServiceAccount tokens, exec plugins) are re-read when they change."""

    server: str
    ca_file: str | None = None
    ca_data: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    token: Callable[[], str | None] = lambda: None
    basic_auth: tuple[str, str] | None = None
    context: str | None = None
    _temp_files: list[str] = field(default_factory=list, repr=False)

    def cleanup(self) -> None:
        """Remove the private copies of inline client certificates."""
        for path in self._temp_files:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
        self._temp_files.clear()


def load_config(kubeconfig: str | None = None, context: str | None = None) -> ClusterConfig:
    """The kubeconfig's context, or the in-cluster ServiceAccount when there is no kubeconfig."""
    paths = kubeconfig_paths(kubeconfig)
    existing = [p for p in paths if p.is_file()]
    if kubeconfig and not existing:
        raise ConfigError(f"kubeconfig {kubeconfig} does not exist")
    if not existing:
        if in_cluster():
            return in_cluster_config()
        raise ConfigError("no kubeconfig found (--kubeconfig, $KUBECONFIG, ~/.kube/config) "
                          "and not running in a cluster")
    return config_from_files(existing, context)


def kubeconfig_paths(explicit: str | None) -> list[Path]:
    if explicit:
        return [Path(explicit).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def current_namespace() -> tuple[str, str] | None:
    """(context, namespace) of the kubeconfig's current context — ``default`` when the
    context names none, as kubectl takes it; None without a usable kubeconfig."""
    existing = [p for p in kubeconfig_paths(None) if p.is_file()]
    if not existing:
        return None
    try:
        doc = merged_kubeconfig(existing)
    except ConfigError:
        return None
    name = doc["current-context"]
    context = doc["contexts"].get(name) if name else None
    if context is None:
        return None
    namespace = context.get("namespace")
    return name, namespace if isinstance(namespace, str) and namespace else "default"


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and (SERVICE_ACCOUNT_DIR / "token").is_file()


def in_cluster_config() -> ClusterConfig:
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    host = f"[{host}]" if ":" in host else host
    token_file = SERVICE_ACCOUNT_DIR / "token"
    return ClusterConfig(server=f"https://{host}:{port}", ca_file=str(SERVICE_ACCOUNT_DIR / "ca.crt"),
                         token=file_token(str(token_file)), context="in-cluster")


def file_token(path: str) -> Callable[[], str | None]:
    """Re-read the token at most once a minute: kubelet rotates projected tokens in place."""
    cache: dict[str, Any] = {"at": 0.0, "token": None}

    def read() -> str | None:
        if time.monotonic() - cache["at"] > 60:
            cache["token"] = Path(path).read_text().strip()
            cache["at"] = time.monotonic()
        return cache["token"]

    return read


def merged_kubeconfig(paths: list[Path]) -> dict[str, Any]:
    """kubectl's merge: named entries and scalars from the first file that defines them."""
    merged: dict[str, Any] = {"clusters": {}, "users": {}, "contexts": {}, "current-context": None}
    for path in paths:
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except UnicodeDecodeError as exc:
            raise ConfigError(f"kubeconfig {path} is not UTF-8 text (byte {exc.start})") from exc
        except (OSError, yaml.YAMLError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigError(f"cannot read kubeconfig {path}: {first}") from exc
        if not isinstance(doc, dict):
            raise ConfigError(f"kubeconfig {path} is not a mapping")
        for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            for name, body in _entries(doc, section, inner, path):
                merged[section].setdefault(name, {**body, "__dir": str(path.parent)})
        current = doc.get("current-context")
        if current is not None and not isinstance(current, str):
            raise ConfigError(f"kubeconfig {path}: current-context is not a string")
        merged["current-context"] = merged["current-context"] or current
    return merged


def _entries(doc: dict[str, Any], section: str, inner: str, path: Path
             ) -> list[tuple[str, dict[str, Any]]]:
    """(name, body) of a kubeconfig section: a list of ``{name, <inner>: mapping}``."""
    entries = doc.get(section) or []
    if not isinstance(entries, list):
        raise ConfigError(f"kubeconfig {path}: {section} is not a list")
    found = []
    for entry in entries:
        body = entry.get(inner) if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not (
                body is None or isinstance(body, dict)):
            raise ConfigError(f"kubeconfig {path}: an entry of {section} is not "
                              f"{{name: …, {inner}: {{…}}}}")
        found.append((entry["name"], body or {}))
    return found


def config_from_files(paths: list[Path], context: str | None) -> ClusterConfig:
    doc = merged_kubeconfig(paths)
    name = context or doc["current-context"]
    if not name:
        raise ConfigError("the kubeconfig has no current-context; pass --context")
    ctx = doc["contexts"].get(name)
    if ctx is None:
        raise ConfigError(f"context {name!r} is not in the kubeconfig")
    cluster_name = _text(ctx, "cluster", f"context {name!r}")
    cluster = doc["clusters"].get(cluster_name)
    server = _text(cluster, "server", f"cluster {cluster_name!r}") if cluster else None
    if cluster is None or not server:
        raise ConfigError(f"context {name!r} names cluster {cluster_name!r}, which has no server")
    user = doc["users"].get(_text(ctx, "user", f"context {name!r}")) or {}
    config = ClusterConfig(server=server.rstrip("/"), context=name,
                           insecure=bool(cluster.get("insecure-skip-tls-verify")),
                           tls_server_name=_text(cluster, "tls-server-name", "cluster"))
    config.ca_file = _path(cluster, "certificate-authority")
    config.ca_data = _data(cluster, "certificate-authority-data")
    _apply_user(config, user)
    return config


def _text(section: dict[str, Any], key: str, where: str) -> str | None:
    """A string field of the kubeconfig, None when absent or empty."""
    value = section.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"kubeconfig {where}: {key} is not a string")
    return value


def _path(section: dict[str, Any], key: str) -> str | None:
    value = _text(section, key, "entry")
    if value is None:
        return None
    return str(Path(section["__dir"], os.path.expanduser(value)))


def _data(section: dict[str, Any], key: str) -> bytes | None:
    value = _text(section, key, "entry")
    try:
        return base64.b64decode(value) if value else None
    except ValueError as exc:
        raise ConfigError(f"kubeconfig {key} is not valid base64") from exc


def _apply_user(config: ClusterConfig, user: dict[str, Any]) -> None:
    config.cert_file = _path(user, "client-certificate") or _private_file(
        config, _data(user, "client-certificate-data"))
    config.key_file = _path(user, "client-key") or _private_file(config, _data(user, "client-key-data"))
    if token := _text(user, "token", "user"):
        config.token = lambda: token
    elif user.get("tokenFile"):
        config.token = file_token(_path(user, "tokenFile") or "")
    elif user.get("exec"):
        config.token = exec_token(_exec_spec(user["exec"]))
    username, password = _text(user, "username", "user"), _text(user, "password", "user")
    if username and password:
        config.basic_auth = (username, password)


def _exec_spec(spec: Any) -> dict[str, Any]:
    """An exec plugin's command, args and env, checked before anything runs."""
    ok = (isinstance(spec, dict) and isinstance(spec.get("command"), str)
          and isinstance(spec.get("args") or [], list)
          and all(isinstance(a, str) for a in spec.get("args") or ())
          and isinstance(spec.get("env") or [], list)
          and all(isinstance(e, dict) and isinstance(e.get("name"), str)
                  and isinstance(e.get("value"), str) for e in spec.get("env") or ()))
    if not ok:
        raise ConfigError("kubeconfig user exec: needs a command string, args strings and env "
                          "entries {name, value}")
    return spec


def _private_file(config: ClusterConfig, data: bytes | None) -> str | None:
    """ssl only loads client certificates from files: write inline ones to a 0600 temp file."""
    if data is None:
        return None
    fd, path = tempfile.mkstemp(prefix="ktrace-cred-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    config._temp_files.append(path)
    return path


def exec_token(spec: dict[str, Any]) -> Callable[[], str | None]:
    """An exec credential plugin (client.authentication.k8s.io): run it, cache its token
    until it expires. Client certificates from plugins are not supported."""
    cache: dict[str, Any] = {"token": None, "expires": 0.0}

    def run() -> str | None:
        if cache["token"] and time.time() < cache["expires"] - 30:
            return cache["token"]
        env = {**os.environ, **{e["name"]: e["value"] for e in spec.get("env") or ()}}
        try:
            out = subprocess.run([spec["command"], *(spec.get("args") or ())], env=env,
                                 capture_output=True, check=True, timeout=60).stdout
            status = orjson.loads(out).get("status") or {}
        except (OSError, subprocess.SubprocessError, orjson.JSONDecodeError, KeyError) as exc:
            raise ConfigError(f"exec credential plugin {spec.get('command')!r} failed: {exc}") from exc
        cache["token"] = status.get("token")
        expiry = status.get("expirationTimestamp")
        cache["expires"] = datetime.fromisoformat(expiry).timestamp() if expiry else float("inf")
        return cache["token"]

    return run
