"""Redaction of stored objects: one set of rules for every path into storage.

The recorder applies them before anything is encoded, ``ktrace import`` before a captured
object is loaded; both refuse Secrets outright (their payload is the secret itself, so no
path list can make one safe to keep), and neither stores what ``DEFAULT_PATHS`` names.

Paths are JSONPath-ish: ``spec.containers[*].env[*].value``,
``metadata.annotations['example.com/token']``; ``[*]`` or ``*`` matches every item of a list
or every value of a mapping, ``[N]`` one list item; a leading ``$``/``.`` and kubectl's ``{}``
are accepted. The matched value is replaced (not removed), so a reader sees that it was there.
"""

from __future__ import annotations

import re
from typing import Any

from schemas.errors import KtraceError

REDACTED = "ktrace:redacted"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_POD_SPECS = ("spec", "spec.template.spec", "spec.jobTemplate.spec.template.spec")
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
DEFAULT_PATHS: tuple[str, ...] = (
    *(f"{root}.{lst}[*].env[*].value" for root in _POD_SPECS for lst in _CONTAINER_LISTS),
    f"metadata.annotations['{LAST_APPLIED}']",
)

#: Never stored, redaction on or off: the recorder does not request them, imports drop them.
REFUSED_KINDS = frozenset({"Secret"})
REFUSED_RESOURCES = frozenset({"secrets"})

Segment = tuple[str, Any]  # ("key", name) | ("all", None) | ("index", n)
_TOKEN = re.compile(r"""\.?([^.\[\]'"]+)|\[\s*(\*|-?\d+|'[^']*'|"[^"]*")\s*\]|\.""")


def is_refused(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is of a kind that is never stored (``REFUSED_KINDS``)."""
    return obj.get("kind") in REFUSED_KINDS


class RedactionPathError(KtraceError):
    """A --redact path that does not parse."""


def parse_path(text: str) -> list[Segment]:
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = body.removeprefix("$")
    segments: list[Segment] = []
    pos = 0
    while pos < len(body):
        match = _TOKEN.match(body, pos)
        if match is None or match.end() == pos:
            raise RedactionPathError(f"cannot parse redaction path {text!r} at {body[pos:]!r}")
        pos = match.end()
        name, bracket = match.groups()
        if name is not None:
            segments.append(("all", None) if name == "*" else ("key", name))
        elif bracket is not None:
            segments.append(_bracket(bracket))
    if not segments:
        raise RedactionPathError(f"empty redaction path {text!r}")
    return segments


def _bracket(inner: str) -> Segment:
    if inner == "*":
        return ("all", None)
    if inner[0] in "'\"":
        return ("key", inner[1:-1])
    return ("index", int(inner))


class Redactor:
    """Replaces the values at its paths in place; ``enabled=False`` is ``--no-redact``."""

    def __init__(self, extra_paths: list[str] | tuple[str, ...] = (), *, enabled: bool = True) -> None:
        self.enabled = enabled
        paths = (*DEFAULT_PATHS, *extra_paths) if enabled else ()
        self.paths = [parse_path(p) for p in paths]

    def apply(self, obj: dict[str, Any]) -> int:
        """Redact ``obj`` in place; returns how many values were replaced."""
        return sum(_redact(obj, path) for path in self.paths)


def _redact(node: Any, path: list[Segment]) -> int:
    head, rest = path[0], path[1:]
    kind, arg = head
    if kind == "key":
        if not isinstance(node, dict) or arg not in node:
            return 0
        return _leaf(node, arg) if not rest else _redact(node[arg], rest)
    if kind == "index":
        if not isinstance(node, list) or not -len(node) <= arg < len(node):
            return 0
        return _leaf(node, arg) if not rest else _redact(node[arg], rest)
    keys = node.keys() if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else ()
    return sum(_leaf(node, k) if not rest else _redact(node[k], rest) for k in list(keys))


def _leaf(container: Any, key: Any) -> int:
    if container[key] is None or container[key] == REDACTED:
        return 0
    container[key] = REDACTED
    return 1
