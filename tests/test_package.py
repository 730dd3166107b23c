"""The package a user installs (marker deploy): the sdist and the wheel build from the
repository, the wheel's metadata names what pip needs, and the wheel alone — in a fresh
virtual environment, run from outside any source tree — serves `ktrace demo`."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = pytest.mark.deploy
REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def run(*argv: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv}: {done.stderr[-3000:]}"
    return done


def requirement(text: str) -> tuple[str, frozenset[str]]:
    parsed = Requirement(text)
    return parsed.name, frozenset(str(s) for s in parsed.specifier)


def test_the_wheel_alone_runs_the_demo(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(REPO),
        cwd=tmp_path)
    run(sys.executable, "-c", "from setuptools import build_meta as b; import sys; b.build_sdist(sys.argv[1])",
        str(dist), cwd=REPO)
    (wheel,) = dist.glob("ktrace-*.whl")
    (sdist,) = dist.glob("ktrace-*.tar.gz")

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert f"Version: {PROJECT['version']}" in metadata
    required = {requirement(line.split(" ", 1)[1]) for line in metadata.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line}
    assert required == {requirement(r) for r in PROJECT["dependencies"]}
    for package in ("ktrace/", "recorder/", "replayer/", "schemas/", "transports/"):
        assert any(n.startswith(package) for n in names), package
    assert any(n.startswith("replayer/demo/recording/") for n in names)  # the demo's data ships
    assert not any(n.startswith("tests/") for n in names)
    with tarfile.open(sdist) as archive:
        assert any(n.endswith("/pyproject.toml") for n in archive.getnames())

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    run(str(env_dir / "bin" / "pip"), "install", "-q", str(wheel), cwd=tmp_path)
    home = tmp_path / "home"  # no source tree here, and a cache of its own
    home.mkdir()
    demo = subprocess.run([str(env_dir / "bin" / "ktrace"), "demo", "-o", "json"], cwd=home, capture_output=True,
                          text=True, timeout=300, env={"PATH": str(env_dir / "bin"), "HOME": str(home),
                                                       "XDG_CACHE_HOME": str(home / ".cache")})
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert json.loads(demo.stdout)
