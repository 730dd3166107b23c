"""-n/--namespace, -A/--all-namespaces and --cluster: which part of a database an analysis
reads. The data is cluster-wide, so all namespaces (and all clusters) is the default, and
-A is accepted as kubectl users type it."""

from __future__ import annotations

import functools
from typing import Any, Callable

import click


def scope_options(func: Callable) -> Callable:
    """Passes ``namespace`` and ``cluster`` (None: all)."""
    @functools.wraps(func)
    def wrapper(*args: Any, all_namespaces: bool, **kwargs: Any) -> Any:
        if all_namespaces and kwargs["namespace"]:
            raise click.UsageError("-n/--namespace and -A/--all-namespaces contradict each other")
        return func(*args, **kwargs)

    for option in reversed([
        click.option("-n", "--namespace", help="Only this namespace (default: all)."),
        click.option("-A", "--all-namespaces", is_flag=True,
                     help="Every namespace (the default; accepted as kubectl takes it)."),
        click.option("--cluster", help="Only this cluster's records, judged at the end of "
                                       "its data (default: every cluster in the database)."),
    ]):
        wrapper = option(wrapper)
    return wrapper
