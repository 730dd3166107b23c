"""ktrace: the thin root mounting the recorder's and the replayer's commands."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__``, looked up when asked for: importlib.metadata costs every start
    (even ``--help``) a few hundredths of a second."""
    if name != "__version__":
        raise AttributeError(f"module 'ktrace' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("ktrace")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0.0.0+source"
