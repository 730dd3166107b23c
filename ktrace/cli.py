"""The ``ktrace`` command: a click group mounting the recorder's and replayer's commands."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
from typing import Any, Iterator, Mapping

import click

from ktrace.entry import EXIT_INTERRUPTED
from schemas.errors import KtraceError


#: Exit statuses (README "Exit status"): 0 success, 1 a runtime error (ktrace's own errors,
#: --strict damage), 2 a usage error (click's convention), 130 interrupted (Ctrl-C); a
#: closed output pipe ends quietly with 0.
EXIT_USAGE = 2


@contextlib.contextmanager
def closed_pipe_is_quiet() -> Iterator[None]:
    """The reader went away (`| head`): say nothing, exit 0, and keep Python's final flush
    quiet."""
    try:
        yield
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):  # no real stdout under a test runner
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise click.exceptions.Exit(0) from None


#: every command as module:attribute, in the sections and order `ktrace --help` lists them,
#: imported only when it runs or shows its help. The command modules import DuckDB, Arrow
#: and Kafka inside the commands that use them, so `ktrace --help` (which reads every
#: command's docstring) imports none of them.
SECTIONS = {
    "Record and load": {
        "record": "ktrace.commands.record:record",
        "topics": "ktrace.commands.topics:topics",
        "replay": "ktrace.commands.replay:replay",
        "import": "ktrace.commands.replay:import_",
        "incident": "ktrace.commands.replay:incident",
        "demo": "ktrace.commands.replay:demo",
    },
    "Analyse a database": {
        "stuck": "ktrace.commands.analyze:stuck",
        "races": "ktrace.commands.analyze:races",
        "gaps": "ktrace.commands.analyze:gaps",
        "timeline": "ktrace.commands.analyze:timeline",
        "explain": "ktrace.commands.analyze:explain",
        "evidence": "ktrace.commands.analyze:evidence",
        "state": "ktrace.commands.analyze:state",
        "get": "ktrace.commands.get:get",
        "info": "ktrace.commands.info:info",
        "query": "ktrace.commands.analyze:query",
    },
    "Report and export": {
        "report": "ktrace.commands.report:report",
        "serve": "ktrace.commands.serve:serve",
        "export": "ktrace.commands.export:export",
        "mcp": "ktrace.commands.mcp:mcp",
    },
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use (click's documented pattern), listed
    in sections."""

    def __init__(self, *args: Any, sections: Mapping[str, Mapping[str, str]],
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections
        self.lazy = {name: target for section in sections.values()
                     for name, target in section.items()}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *sorted(set(super().list_commands(ctx)) - set(self.lazy))]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, attribute = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command is offered the nearest of all commands, not only of those
        imported so far."""
        if (not ctx.resilient_parsing and not args[0].startswith("-")
                and self.get_command(ctx, args[0]) is None):
            raise click.exceptions.NoSuchCommand(args[0], possibilities=self.list_commands(ctx),
                                                 ctx=ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands in their sections (record and load, analyses, report and export),
        in the order of use rather than of the alphabet."""
        rows = {title: [(name, self.get_command(ctx, name)) for name in names]
                for title, names in self.sections.items()}
        width = max(len(name) for name in self.lazy)
        for title, commands in rows.items():
            with formatter.section(title):
                formatter.write_dl([(name.ljust(width),  # one column across the sections
                                     command.get_short_help_str(formatter.width - 6 - width))
                                    for name, command in commands if not command.hidden])


class KtraceGroup(LazyGroup):
    """Every failure ends as one ``Error:`` line on stderr and a documented exit status:
    no usage dump, no traceback on Ctrl-C, nothing at all when the reader closed the pipe."""

    def invoke(self, ctx: click.Context) -> Any:
        with closed_pipe_is_quiet():
            try:
                return super().invoke(ctx)
            except KtraceError as exc:
                raise click.ClickException(str(exc)) from exc

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with closed_pipe_is_quiet():  # `ktrace --help | head` prints while parsing
            return super().make_context(*args, **kwargs)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            result = super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:  # plain `ktrace`: its help
            click.echo(exc.ctx.get_help())
            sys.exit(0)
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


@click.group(cls=KtraceGroup, sections=SECTIONS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ktrace", prog_name="ktrace")
@click.option("--log-level", default="WARNING", show_default=True, envvar="KTRACE_LOG_LEVEL",
              type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False))
def cli(log_level: str) -> None:
    """ktrace records what a Kubernetes cluster does (list/watch → Avro → Kafka or a local
    log) and replays it into DuckDB to answer why pods got stuck, what raced during a
    rollout, and what happened in what order."""
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


# kubectl runs a plugin named kubectl-<name> found on PATH for `kubectl <name> …`
KUBECTL_PLUGIN = "kubectl-ktrace"


def main() -> None:
    as_plugin = os.path.basename(sys.argv[0]) == KUBECTL_PLUGIN
    cli(prog_name="kubectl ktrace" if as_plugin else "ktrace")
