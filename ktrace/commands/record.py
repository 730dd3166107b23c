"""ktrace record: list/watch a cluster into Kafka or a local log. The recorder itself (and
Kafka's client) is imported when the command runs, so that `--help` starts fast."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ktrace.options import DurationType, SizeType, kafka_options, redaction_options
from recorder.kube.catalogue import CATALOGUE, DEFAULT_KINDS
from recorder.settings import DEFAULT_OUT, DEFAULT_SPOOL_BYTES

if TYPE_CHECKING:
    from transports.kafka.settings import KafkaSettings

OPTIONAL_KINDS = [spec.resource for spec in CATALOGUE if not spec.default]


@click.command(short_help="Record a cluster's list/watch stream to Kafka or a local log.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False),
              help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
@click.option("--context", help="Kubeconfig context (default: current-context).")
@click.option("--kinds", multiple=True, metavar="KIND[,KIND…]",
              help=f"Resources to record (default: {', '.join(DEFAULT_KINDS)}; also "
                   f"{', '.join(OPTIONAL_KINDS)}), named as kubectl names them (pods, po, Pod, "
                   "deploy…). Secrets are never recorded.")
@click.option("-n", "--namespace", "namespaces", multiple=True,
              help="Record namespaced kinds in this namespace only (repeatable; default: all). "
                   "Leases are always those of kube-node-lease.")
@kafka_options
@click.option("--cluster", help="Cluster name stored in every record (default: the context name).")
@click.option("--out", type=click.Path(file_okay=False),
              help=f"Local log directory, used when no --kafka is given (default: ./{DEFAULT_OUT}).")
@click.option("--retention-size", type=SizeType(),
              help="Local log: keep at most this much per topic (e.g. 10G), removing whole "
                   "segments, oldest first.")
@click.option("--retention-age", type=DurationType(),
              help="Local log: remove segments last written longer ago than this (e.g. 7d).")
@click.option("--state-dir", type=click.Path(file_okay=False),
              help="Checkpoints (and the Kafka spool): a restart resumes where it stopped.")
@click.option("--spool-dir", type=click.Path(file_okay=False),
              help="Where records wait while Kafka is unreachable (default: STATE_DIR/spool).")
@click.option("--spool-max-mb", type=click.IntRange(1), default=DEFAULT_SPOOL_BYTES // 2**20,
              show_default=True, help="Spool size limit; when full, watches pause (nothing is dropped).")
@redaction_options
@click.option("--typed-facts", is_flag=True,
              help="Also write the typed meta/facts Avro fields, for Kafka consumers that read "
                   "them (the object JSON holds the same; ktrace replay does not need them).")
@click.option("--metrics-port", type=click.IntRange(0, 65535),
              help="Serve /metrics, /healthz and /readyz on this port.")
@click.option("--duration", type=DurationType(),
              help="Stop after this long: 90s, 2h30m, 1d, or seconds (default: until "
                   "SIGTERM/SIGINT).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def record(kubeconfig: str | None, context: str | None, kinds: tuple[str, ...],
           namespaces: tuple[str, ...], kafka: KafkaSettings | None, topic_prefix: str,
           cluster: str | None, out: str | None, retention_size: int | None,
           retention_age: float | None, state_dir: str | None, spool_dir: str | None,
           spool_max_mb: int, redact: tuple[str, ...], no_redact: bool, typed_facts: bool,
           metrics_port: int | None,
           duration: float | None, log_format: str) -> None:
    """Record every change the API server reports (list/watch), with the component that made
    it, to Kafka (--kafka) or a local log (--out), until SIGTERM/SIGINT or --duration.

    Examples:

    \b
      ktrace record --out ktrace-log --duration 1h
      ktrace record --kafka broker:9092 --kinds pods,events --cluster prod"""
    from recorder.logs import use_json_logs
    from recorder.session import record as run_recording
    from recorder.settings import RecordSettings
    if kafka is not None and out is not None:
        raise click.UsageError("give --kafka or --out, not both")
    if kafka is not None and (retention_size or retention_age):
        raise click.UsageError("--retention-size/--retention-age are for the local log; "
                               "Kafka topics have their own retention")
    if log_format == "json":
        use_json_logs()
    settings = RecordSettings(
        kubeconfig=kubeconfig, context=context, kinds=kinds, namespaces=namespaces, kafka=kafka,
        topic_prefix=topic_prefix, cluster=cluster, out=out, retention_bytes=retention_size,
        retention_age_s=retention_age, state_dir=state_dir,
        spool_dir=spool_dir, spool_max_bytes=spool_max_mb * 2**20, redact=redact,
        no_redact=no_redact, typed_facts=typed_facts, metrics_port=metrics_port,
        duration=duration)
    summary = run_recording(settings)
    click.echo(f"session {summary.session}: {summary.records} records to {summary.destination} "
               f"({summary.cause})", err=True)
