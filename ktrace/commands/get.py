"""ktrace get KIND[,KIND…] [NAME…] | KIND/NAME…: what the database holds at a moment, as
kubectl shows it — its columns and STATUS rules, -n resolution, ``-o yaml``/``json`` of the
objects as they were (``kind: List`` for several), --no-headers, --show-labels, -L, --sort-by.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import click

from ktrace import views
from ktrace.databases import with_db
from ktrace.namespaces import resolve_namespace
from ktrace.options import fetch_kafka_options
from ktrace.output import (Answer, Column, Output, dump_document, emit, output_option,
                           table_text, write)
from ktrace.scope import target_scope_options
from ktrace.when import TIME_FORMS, moment
from schemas.errors import KtraceError
from schemas.kinds import ObjectRef, kind_name

#: --sort-by paths a row answers without the object (the rest read the stored object)
ROW_PATHS = {"metadata.name": "name", "metadata.namespace": "namespace",
             "metadata.uid": "uid", "metadata.creationTimestamp": "created_at"}


def kind_groups(targets: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """``pods web-1 web-2``, ``pods,deploy`` or ``pod/web-1 deploy/web`` → [(Kind, names)]."""
    if all("/" in t for t in targets):
        groups: dict[str, list[str]] = {}
        for ref in (ObjectRef.parse(t) for t in targets):
            groups.setdefault(ref.kind.kind, []).append(ref.name)
        return [(kind, tuple(names)) for kind, names in groups.items()]
    if any("/" in t for t in targets):
        raise click.UsageError("there is no need to specify a resource type as a separate "
                               "argument when passing arguments in resource/name form")
    kinds = [kind_name(k).kind for k in targets[0].split(",") if k]
    return [(kind, targets[1:]) for kind in dict.fromkeys(kinds)]


def label_keys(values: tuple[str, ...]) -> list[str]:
    """-L takes keys comma-separated, and more than once."""
    return [k.strip() for value in values for k in value.split(",") if k.strip()]


def field_path(path: str) -> str:
    """``{.metadata.name}`` or ``.metadata.name`` → ``metadata.name``."""
    return path.strip().removeprefix("{").removesuffix("}").strip().lstrip(".")


def sort_key(path: str, row: dict[str, Any]) -> tuple[int, Any]:
    """``--sort-by`` as kubectl takes it: a JSONPath (``.metadata.name``,
    ``{.status.containerStatuses[0].restartCount}``) into the object; missing values first."""
    steps = field_path(path)
    if steps in ROW_PATHS:
        value = row[ROW_PATHS[steps]]
    else:
        value = row["as_recorded"]
        for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", steps):
            if index:
                value = value[int(index)] if isinstance(value, list) and \
                    int(index) < len(value) else None
            else:
                value = value.get(name) if isinstance(value, dict) else None
    if isinstance(value, (dict, list)):
        raise KtraceError(f"--sort-by {path}: the field is not a single value")
    return (0, 0) if value is None else (1, value if isinstance(value, (int, float)) else str(value))


def decorated(view: views.View, keys: list[str], show_labels: bool) -> views.View:
    """The view with -L KEY columns (headed by the key's last part, as kubectl does) and
    --show-labels' LABELS column after the others in the table."""
    extra = [Column(f"label:{k}", f"label {k}", header=k.split("/")[-1].upper())
             for k in keys]
    if show_labels:
        extra.append(Column("label:*", "labels", header="LABELS", fit="prose"))
    return dataclasses.replace(view, columns=view.columns + tuple(extra))


def with_labels(row: dict[str, Any], keys: list[str], show_labels: bool) -> dict[str, Any]:
    labels = row.get("labels") or {}
    cells = {f"label:{k}": labels.get(k, "") for k in keys}
    if show_labels:
        cells["label:*"] = ",".join(sorted(f"{k}={v}" for k, v in labels.items())) or "<none>"
    return {**row, **cells}


def as_kubectl(rows: list[dict[str, Any]], one: bool) -> Any:
    """The objects as ``kubectl get -o json`` prints them: one object alone, else a List."""
    missing = [f"{r['kind']}/{r['name']}" for r in rows if r["as_recorded"] is None]
    if missing:
        raise KtraceError(f"no stored object for {', '.join(missing)}: -o wide or -o csv "
                          "prints what the database knows of them")
    if one and len(rows) == 1:
        return rows[0]["as_recorded"]
    return {"apiVersion": "v1", "kind": "List", "items": [r["as_recorded"] for r in rows],
            "metadata": {"resourceVersion": ""}}


@click.command(short_help="Objects at a moment, as kubectl get shows them.")
@click.argument("targets", nargs=-1, required=True,
                metavar="KIND[,KIND…] [NAME…] | KIND/NAME…")
@click.option("--at", metavar="TIME", help=f"As it was at this moment: {TIME_FORMS} "
                                           "(default: the end of the data).")
@click.option("-l", "--selector", help="Label selector, as kubectl takes it: app=web, "
                                       "tier!=db, 'env in (a,b)', canary, !canary.")
@click.option("--field-selector", help="Field selector: metadata.name, metadata.namespace, "
                                       "and per kind e.g. spec.nodeName, status.phase (pods), "
                                       "type, reason, involvedObject.kind (events).")
@click.option("--no-headers", is_flag=True, help="Print tables without their header line.")
@click.option("--show-labels", is_flag=True, help="Add each object's labels as the last "
                                                  "column.")
@click.option("-L", "--label-columns", "label_columns", multiple=True, metavar="KEY[,KEY…]",
              help="Add a column with the value of each of these labels.")
@click.option("--sort-by", metavar="JSONPATH", help="Sort by a field of the objects, as "
                                                    "kubectl: .metadata.name, "
                                                    "'{.metadata.creationTimestamp}'.")
@target_scope_options
@fetch_kafka_options
@with_db
@output_option
def get(targets: tuple[str, ...], at: str | None, selector: str | None,
        field_selector: str | None, no_headers: bool, show_labels: bool,
        label_columns: tuple[str, ...], sort_by: str | None, namespace: str | None,
        all_namespaces: bool, cluster: str | None, kafka, con, output: str) -> None:
    """What the database holds, kubectl-style: pods (READY, STATUS, RESTARTS, AGE, NODE),
    deploy, rs, sts, ds, jobs, nodes, ns, events, pvc, pv… as they were at --at. Several
    kinds at once (pods,deploy); -o yaml or json prints the objects as they were, one named
    object alone and otherwise a kind: List. A name without -n found in several namespaces
    is ambiguous (the current kubeconfig context's namespace decides if it is one of them).

    Examples:

    \b
      ktrace get pods -A --db incident.duckdb
      ktrace get po -l app=web --at end-1m -L app --sort-by .metadata.name
      ktrace get pods,deploy -n shop --no-headers
      ktrace get pod/held -n hold -o yaml"""
    from replayer.analyses.get import get as get_objects, recorded
    from replayer.analyses.scope import data_end
    groups = kind_groups(targets)
    if output == "csv" and len(groups) > 1:
        raise click.UsageError("-o csv is one table: name one kind at a time")
    for kind, _ in groups:
        if not recorded(con, kind):
            raise KtraceError(f"the recording holds no {kind} at all (the recorder did not "
                              "watch that kind): `ktrace info` lists the kinds it holds")
    when = moment(at, con) or data_end(con, cluster)
    objects = output in ("json", "yaml") or (sort_by is not None
                                             and field_path(sort_by) not in ROW_PATHS)
    answers = []
    for kind, names in groups:
        where = resolve_namespace(con, kind, list(names), namespace, cluster,
                                  all_namespaces=all_namespaces)
        columns, data = get_objects(con, kind, when, names=names, namespace=where,
                                    cluster=cluster, labels=selector, fields=field_selector,
                                    full=objects, kafka=kafka)
        rows = [dict(zip(columns, r)) for r in data]
        if sort_by:
            rows.sort(key=lambda row: sort_key(sort_by, row))
        # kubectl's NAMESPACE column: with -A, or a list of every namespace's objects
        answers.append((kind, all_namespaces or (where is None and not names), rows))
    if output in ("json", "yaml"):
        everything = [row for _, _, rows in answers for row in rows]
        one = len(groups) == 1 and len(groups[0][1]) == 1
        write(dump_document(as_kubectl(everything, one), output))
        return
    _print_tables(answers, Output(output, headers=not no_headers), label_keys(label_columns),
                  show_labels, when, namespace)


def _print_tables(answers: list[tuple[str, bool, list[dict[str, Any]]]],
                  out: Output, keys: list[str], show_labels: bool, when: Any,
                  namespace: str | None) -> None:
    """Each kind's table, a blank line between them, as kubectl prints several kinds; a
    table of one namespace's objects (-n, or named objects without -A) has no NAMESPACE
    column."""
    shown = [(kind, spans, rows) for kind, spans, rows in answers if rows]
    if not shown:
        click.echo("No resources found" + (f" in {namespace} namespace." if namespace
                                           else "."), err=True)
        return
    for i, (kind, spans_namespaces, rows) in enumerate(shown):
        view = decorated(views.GET_VIEWS.get(kind, views.GET_OTHER), keys, show_labels)
        if not spans_namespaces and out.fmt in ("table", "wide"):
            view = dataclasses.replace(view, columns=tuple(c for c in view.columns
                                                           if c.key != "namespace"))
        rows = [with_labels({k: v for k, v in r.items() if k != "as_recorded"}, keys,
                            show_labels)
                for r in rows]
        answer = Answer(view, rows, now=when)
        if out.fmt in ("table", "wide"):
            write(("\n" if i else "") + table_text(answer, out))
        else:
            emit(answer, out)
