"""Which namespace a named object is in when no ``-n`` is given, as kubectl users expect:
a name found in one namespace is that object; a name found in several is ambiguous — the
current kubeconfig context's namespace decides when it is one of them, else the command
stops and lists them. ktrace never merges two objects of one name silently.

The context's namespace only chooses among the recording's: a recording is often read far
from the cluster it was made in, where the current context points elsewhere."""

from __future__ import annotations

from typing import Any

import click

from recorder.kube.config import current_namespace
from schemas.errors import KtraceError


def resolve_namespace(con: Any, kind: str, names: list[str], namespace: str | None,
                      cluster: str | None, *, all_namespaces: bool) -> str | None:
    """The namespace to read ``kind`` objects ``names`` in (None: wherever they are)."""
    from replayer.analyses.scope import namespaces_named
    if namespace or all_namespaces or not names:
        return namespace
    found = namespaces_named(con, kind, names, cluster)
    if len(found) <= 1:
        return namespace
    what = f"{kind} {', '.join(repr(n) for n in names)}"
    context = current_namespace()
    if context and context[1] in found:
        click.echo(f"note: {what} is in namespaces {', '.join(found)}: showing {context[1]}, "
                   f"the namespace of kubeconfig context {context[0]} (-n to choose)", err=True)
        return context[1]
    raise KtraceError(f"{what} is in {len(found)} namespaces ({', '.join(found)}): pass "
                      "-n NAMESPACE, or -A for all of them")
