"""One recorder per state and spool directory (docs/scale-out.md): two shards, or the old and
new pod of a rolling update on one volume, would overwrite each other's checkpoints and
spool, so the second is refused with one line — also from another process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from ktrace.cli import cli
from recorder.session import LOCK_FILE, exclusive_directories
from recorder.settings import RecordSettings
from schemas.errors import KtraceError


def test_a_second_recorder_on_the_same_state_directory_is_refused(tmp_path: Path) -> None:
    settings = RecordSettings(state_dir=str(tmp_path / "state"))
    with exclusive_directories(settings):
        with pytest.raises(KtraceError, match="is in use by another running recorder"):
            with exclusive_directories(settings):
                pass
    with exclusive_directories(settings):  # released at the end of the first
        assert (tmp_path / "state" / LOCK_FILE).exists()


def test_separate_directories_do_not_conflict(tmp_path: Path) -> None:
    with exclusive_directories(RecordSettings(state_dir=str(tmp_path / "a"))):
        with exclusive_directories(RecordSettings(state_dir=str(tmp_path / "b"))):
            pass


def test_a_shared_spool_directory_is_refused_too(tmp_path: Path) -> None:
    spool = str(tmp_path / "spool")
    with exclusive_directories(RecordSettings(state_dir=str(tmp_path / "a"), spool_dir=spool)):
        with pytest.raises(KtraceError, match="spool"):
            with exclusive_directories(RecordSettings(state_dir=str(tmp_path / "b"), spool_dir=spool)):
                pass


def test_ktrace_record_refuses_a_directory_another_process_holds(tmp_path: Path) -> None:
    """Another process holds the state directory; ``ktrace record`` stops with one line
    before it reads a kubeconfig or reaches a cluster."""
    state = tmp_path / "state"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from recorder.session import exclusive_directories
            from recorder.settings import RecordSettings
            with exclusive_directories(RecordSettings(state_dir={str(state)!r})):
                print("held", flush=True)
                sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        result = CliRunner().invoke(cli, ["record", "--state-dir", str(state),
                                          "--kubeconfig", str(tmp_path / "none")])
        assert result.exit_code == 1
        assert result.output.strip() == (
            f"Error: {state} is in use by another running recorder: give each recorder "
            "(each shard, each pod) its own --state-dir/--spool-dir")
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
