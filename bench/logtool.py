"""The command line every bench tool over a recorded local log shares: LOG and --prefix."""

from __future__ import annotations

import argparse


def log_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """``python -m MODULE LOG [--prefix P]``, described by the first line of ``doc``."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}",
                                     description=doc.splitlines()[0])
    parser.add_argument("log", help="a local log directory (the bench keeps its own under "
                                    "~/.cache/ktrace/bench-dbs/log-SIZE)")
    parser.add_argument("--prefix", default="ktrace", help="its topics' prefix")
    return parser
