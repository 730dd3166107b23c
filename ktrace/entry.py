"""The ``ktrace`` console script. It imports the CLI itself, so that a Ctrl-C while the
commands' modules are still loading (DuckDB, Kafka, Arrow: a second or more) ends like one
anywhere else — exit 130, one line, no traceback."""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    try:
        from ktrace.cli import main as run
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    run()
