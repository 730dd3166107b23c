"""The ``ktrace`` command: a click group mounting the recorder's and replayer's commands."""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from ktrace import __version__
from ktrace.commands.record import record
from ktrace.commands import analyze
from ktrace.commands import replay as replay_commands
from ktrace.commands.topics import topics
from schemas.errors import KtraceError


class KtraceGroup(click.Group):
    """Turns ktrace's own errors into one clear line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KtraceError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=KtraceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ktrace")
@click.option("--log-level", default="WARNING", show_default=True, envvar="KTRACE_LOG_LEVEL",
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def cli(log_level: str) -> None:
    """ktrace records what a Kubernetes cluster does (list/watch → Avro → Kafka or a local
    log) and replays it into DuckDB to answer why pods got stuck, what raced during a
    rollout, and what happened in what order."""
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if log_level.upper() != "DEBUG":
        # kafka-python logs every refused connection; ktrace reports the outcome itself.
        logging.getLogger("kafka").setLevel(logging.CRITICAL)


cli.add_command(topics)
cli.add_command(record)
cli.add_command(replay_commands.replay)
cli.add_command(replay_commands.import_)
cli.add_command(replay_commands.demo)
cli.add_command(analyze.query)
cli.add_command(analyze.timeline)
cli.add_command(analyze.explain)
cli.add_command(analyze.evidence)
cli.add_command(analyze.stuck)
cli.add_command(analyze.gaps)
cli.add_command(analyze.races)
cli.add_command(analyze.state)
cli.add_command(analyze.incident)


def main() -> None:
    cli(prog_name="ktrace")
