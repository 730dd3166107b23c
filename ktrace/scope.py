"""-n/--namespace, -A/--all-namespaces and --cluster: which part of a database an analysis
reads. The data is cluster-wide, so all namespaces (and all clusters) is the default, and
-A is accepted as kubectl users type it."""

from __future__ import annotations

import functools
from typing import Any, Callable

import click


def scope_options(func: Callable) -> Callable:
    """Passes ``namespace`` and ``cluster`` (None: all)."""
    return _scope_options(func, pass_all=False)


def target_scope_options(func: Callable) -> Callable:
    """The same for a command about named objects, which also needs ``all_namespaces``:
    a name in several namespaces is ambiguous unless -A asks for all of them
    (ktrace.namespaces)."""
    return _scope_options(func, pass_all=True)


def _scope_options(func: Callable, *, pass_all: bool) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any, all_namespaces: bool, **kwargs: Any) -> Any:
        if all_namespaces and kwargs["namespace"]:
            raise click.UsageError("-n/--namespace and -A/--all-namespaces contradict each other")
        if pass_all:
            kwargs["all_namespaces"] = all_namespaces
        return func(*args, **kwargs)

    for option in reversed([
        click.option("-n", "--namespace", help="Only this namespace (default: all)."),
        click.option("-A", "--all-namespaces", is_flag=True,
                     help="Every namespace (the default for lists; for a name found in "
                          "several namespaces, all of them)."),
        click.option("--cluster", help="Only this cluster's records, judged at the end of "
                                       "its data (default: every cluster in the database)."),
    ]):
        wrapper = option(wrapper)
    return wrapper
