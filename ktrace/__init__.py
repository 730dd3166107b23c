"""ktrace: the thin root mounting the recorder's and the replayer's commands."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ktrace")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"
