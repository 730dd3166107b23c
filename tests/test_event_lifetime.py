"""An Event whose reference has no uid (kubectl output, the taint-eviction controller's) is
matched to an object by name — only within that object's lifetime: a name reused by a new
object does not inherit its predecessor's Events (stuck_kubelet_events)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replayer import db
from replayer.replay import import_captures
from tests.replayer_data import rows

#: tests/data/public/terminating-1: pod default/nginx, created 12:00:00, stuck Terminating
CAPTURE = Path(__file__).parent / "data" / "public" / "terminating-1.json"


def kill_failed(last_seen: str) -> str:
    """The kubelet's FailedKillPod about pod default/nginx, as `kubectl get events -o json`
    of an older cluster prints it: a reference without a uid."""
    return json.dumps({"type": "ADDED", "object": {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"nginx.{last_seen[-9:-1].replace(':', '')}", "namespace": "default",
                     "uid": f"00000000-0000-4000-8000-0000000{last_seen[-9:-1].replace(':', '')}"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "nginx"},
        "reason": "FailedKillPod", "type": "Warning", "count": 1, "source": {"component": "kubelet"},
        "message": "error killing pod: failed to \"KillContainer\" for \"nginx-server\"",
        "firstTimestamp": last_seen, "lastTimestamp": last_seen}})


def causes(tmp_path: Path, last_seen: str) -> list[tuple]:
    capture = tmp_path / "capture.json"
    capture.write_text(CAPTURE.read_text() + kill_failed(last_seen) + "\n")
    con = db.open_db(str(tmp_path / "import.duckdb"))
    try:
        import_captures([str(capture)], con, cluster="public")
        # judged a minute on, past its deadline (12:00:12) and the margin, whatever the data's end
        return rows(con, "SELECT c.cause, c.detail, len(c.evidence) FROM stuck_at(TIMESTAMP '2017-04-21 12:01:00') s, "
                         "unnest(s.causes) u(c) WHERE s.name = 'nginx'")
    finally:
        con.close()


RUNNING = "containers still running past the grace period: nginx-server"
KILL_FAILED = '; FailedKillPod: error killing pod: failed to "KillContainer" for "nginx-server"'


@pytest.mark.parametrize("last_seen, found", [
    # during the pod's deletion: its own — quoted, its record evidence beside the pod's
    ("2017-04-21T12:00:13Z", [("containers_not_exiting", RUNNING + KILL_FAILED, 2)]),
    # before its creationTimestamp (12:00:00): an earlier nginx's, not this one's
    ("2017-04-21T11:58:00Z", [("containers_not_exiting", RUNNING, 1)]),
])
def test_an_event_without_a_uid_counts_only_in_the_objects_lifetime(tmp_path: Path, last_seen: str,
                                                                    found: list[tuple]):
    assert causes(tmp_path, last_seen) == found
