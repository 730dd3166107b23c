"""ktrace get KIND [NAME…]: what the database holds at a moment, as kubectl shows it."""

from __future__ import annotations

import click

from ktrace import views
from ktrace.databases import with_db
from ktrace.output import Answer, emit, output_option
from ktrace.scope import scope_options
from ktrace.when import TIME_FORMS, moment
from schemas.kinds import ObjectRef, kind_name


def split_targets(targets: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """``pods web-1 web-2`` or ``pod/web-1 pod/web-2`` → (kind, names)."""
    if "/" in targets[0]:
        refs = [ObjectRef.parse(t) for t in targets]
        if len({r.kind for r in refs}) > 1:
            raise click.UsageError("name objects of one kind at a time (KIND/NAME …)")
        return refs[0].kind.resource, tuple(r.name for r in refs)
    return targets[0], targets[1:]


@click.command(short_help="Objects at a moment, as kubectl get shows them.")
@click.argument("targets", nargs=-1, required=True, metavar="KIND [NAME…] | KIND/NAME…")
@click.option("--at", metavar="TIME", help=f"As it was at this moment: {TIME_FORMS} "
                                           "(default: the end of the data).")
@click.option("-l", "--selector", help="Label selector, as kubectl takes it: app=web, "
                                       "tier!=db, 'env in (a,b)', canary, !canary.")
@click.option("--field-selector", help="Field selector: metadata.name, metadata.namespace, "
                                       "and per kind e.g. spec.nodeName, status.phase (pods), "
                                       "type, reason, involvedObject.kind (events).")
@scope_options
@with_db
@output_option
def get(targets: tuple[str, ...], at: str | None, selector: str | None,
        field_selector: str | None, namespace: str | None, cluster: str | None, con,
        output: str) -> None:
    """What the database holds, kubectl-style: pods (READY, STATUS, RESTARTS, AGE, NODE),
    deploy, rs, sts, ds, jobs, nodes, ns, events, pvc, pv… as they were at --at.

    Examples:

    \b
      ktrace get pods -A --db incident.duckdb
      ktrace get po -l app=web --at 2026-11-30T07:12:00Z
      ktrace get pods --field-selector spec.nodeName=node-1 -o wide"""
    from replayer.analyses.get import get as get_objects
    from replayer.analyses.scope import data_end
    resource, names = split_targets(targets)
    kind = kind_name(resource).kind
    when = moment(at, con) or data_end(con, cluster)
    rows = get_objects(con, kind, when, names=names, namespace=namespace, cluster=cluster,
                       labels=selector, fields=field_selector)
    emit(Answer.of(views.GET_VIEWS.get(kind, views.GET_OTHER), rows, now=when), output)
