"""The ``ktrace`` command: a click group mounting the recorder's and replayer's commands."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import Any

import click

from ktrace import __version__
from ktrace.entry import EXIT_INTERRUPTED
from ktrace.commands.record import record
from ktrace.commands import analyze
from ktrace.commands import replay as replay_commands
from ktrace.commands.report import report
from ktrace.commands.topics import topics
from schemas.errors import KtraceError


#: Exit statuses (README "Exit status"): 0 success, 1 a runtime error (ktrace's own errors,
#: --strict damage), 2 a usage error (click's convention), 130 interrupted (Ctrl-C); a
#: closed output pipe ends quietly with 0.
EXIT_USAGE = 2


class KtraceGroup(click.Group):
    """Every failure ends as one ``Error:`` line on stderr and a documented exit status:
    no usage dump, no traceback on Ctrl-C, nothing at all when the reader closed the pipe."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KtraceError as exc:
            raise click.ClickException(str(exc)) from exc
        except BrokenPipeError:
            # the reader went away (`| head`): say nothing, and keep Python's final flush quiet
            with contextlib.suppress(OSError, ValueError):  # no real stdout under a test runner
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(0) from None

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            result = super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except (KeyboardInterrupt, click.Abort):
            click.echo("interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        sys.exit(result if isinstance(result, int) else 0)


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
cli.add_command(report)


def main() -> None:
    cli(prog_name="ktrace")
