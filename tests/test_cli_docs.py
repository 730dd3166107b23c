"""The CLI explains itself and starts fast: every command's help has an example,
docs/cli.md is what the commands say (ktrace.clidoc), and starting ktrace — or printing any
help — imports none of DuckDB, Kafka, Arrow or fastavro."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from ktrace import clidoc
from ktrace.cli import cli

HEAVY = ("duckdb", "kafka", "pyarrow", "fastavro")
ROOT = click.Context(cli, info_name="ktrace")
NAMES = cli.list_commands(ROOT)


@pytest.mark.parametrize("name", NAMES)
def test_every_command_help_has_an_example(name):
    out = CliRunner().invoke(cli, [name, "--help"], prog_name="ktrace").output
    examples = out.partition("Examples:")[2].splitlines()
    assert any(line.strip().startswith(f"ktrace {name}") or f"| ktrace {name}" in line
               for line in examples), out


def test_docs_cli_md_is_what_the_commands_say():
    current = clidoc.DOC.read_text(encoding="utf-8")
    assert clidoc.BEGIN in current and clidoc.END in current
    assert clidoc.rendered(current) == current, "run: python -m ktrace.clidoc --write"


def test_the_reference_lists_every_command_and_option():
    reference = clidoc.reference()
    for name in NAMES:
        command = cli.get_command(ROOT, name)
        assert f"### `ktrace {name}`" in reference
        for param in command.params:
            assert all(f"`{opt}" in reference or f" {opt}" in reference for opt in param.opts
                       if opt.startswith("--")), (name, param.opts)


def _modules_after(code: str) -> set[str]:
    probe = (f"import sys\n{code}\n"
             f"print('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.rpartition("loaded:")[2].split())


def test_importing_the_cli_pulls_no_heavy_module():
    assert _modules_after("import ktrace.cli") == set()


@pytest.mark.parametrize("args", [["--help"]] + [[name, "--help"] for name in NAMES],
                         ids=lambda a: " ".join(a))
def test_help_pulls_no_heavy_module(args):
    run = ("from ktrace.cli import cli\n"
           f"try:\n    cli.main({args!r}, prog_name='ktrace')\nexcept SystemExit:\n    pass")
    assert _modules_after(run) == set()


def test_the_readmes_compose_command_is_docs_deploys():
    """The README's one-line start of the Compose stack says what docs/deploy.md says it
    needs (a kubeconfig and the user to read it as)."""
    root = clidoc.DOC.parents[1]

    def compose(text: str) -> str:
        start = text.index("KUBECONFIG_FILE=")
        command = text[start:text.index("up --build", start) + len("up --build")]
        return " ".join(command.replace("\\\n", " ").split())

    readme, deploy = ((root / name).read_text(encoding="utf-8")
                      for name in ("README.md", "docs/deploy.md"))
    assert compose(readme) == compose(deploy)
    assert compose(readme).endswith("docker compose -f compose/docker-compose.yml up --build")
