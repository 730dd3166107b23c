"""Option sets shared by commands: Kafka connection (TLS/SASL), the source to read,
redaction, durations and sizes, -n for loads, and where to write the HTML report. The
database's own options are in ktrace/databases.py."""

from __future__ import annotations

import functools
from typing import Any, Callable

import click

from ktrace.when import parse_duration
from schemas.errors import KtraceError
from schemas.formats import spell_duration
from transports.kafka.registry import SUBJECT_STRATEGIES
from schemas.topics import DEFAULT_PREFIX


def kafka_options(func: Callable) -> Callable:
    """--kafka BOOTSTRAP plus TLS/SASL and Schema Registry options; passes ``kafka``
    (KafkaSettings or None)."""
    return _kafka_options(func, [
        click.option("--kafka", "bootstrap", envvar="KTRACE_KAFKA", metavar="HOST:PORT[,…]",
                     help="Kafka bootstrap servers. Without it, the local log is used."),
        click.option("--topic-prefix", default=DEFAULT_PREFIX, show_default=True,
                     envvar="KTRACE_TOPIC_PREFIX", help="Topics are <prefix>.<resource>."),
    ])


def fetch_kafka_options(func: Callable) -> Callable:
    """The Kafka options of a command that fetches objects a database does not store from
    the recording's Kafka: how to reach it (TLS/SASL, the registry), and --kafka to reach it
    at another address than the one recorded. Passes ``kafka`` (KafkaSettings or None)."""
    return _kafka_options(func, [
        click.option("--kafka", "bootstrap", envvar="KTRACE_KAFKA", metavar="HOST:PORT[,…]",
                     help="Fetch objects from the recording's Kafka at this address "
                          "(default: the one it was replayed from)."),
    ], recorded_bootstrap=True)


def _kafka_options(func: Callable, first: list[Callable], *,
                   recorded_bootstrap: bool = False) -> Callable:
    """``recorded_bootstrap``: the settings always passed, their bootstrap empty without
    --kafka (the one the database recorded is used)."""
    options = first + [
        click.option("--kafka-security-protocol", default="PLAINTEXT", show_default=True,
                     type=click.Choice(["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"])),
        click.option("--kafka-sasl-mechanism",
                     type=click.Choice(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])),
        click.option("--kafka-sasl-username", envvar="KTRACE_KAFKA_SASL_USERNAME"),
        click.option("--kafka-sasl-password", envvar="KTRACE_KAFKA_SASL_PASSWORD",
                     help="Better given by the environment variable than on the command line."),
        click.option("--kafka-ssl-cafile", type=click.Path(exists=True, dir_okay=False)),
        click.option("--kafka-ssl-certfile", type=click.Path(exists=True, dir_okay=False)),
        click.option("--kafka-ssl-keyfile", type=click.Path(exists=True, dir_okay=False)),
        duration_option("--kafka-timeout", default=10.0,
                        help="How long to wait for a broker before giving up."),
        click.option("--schema-registry", envvar="KTRACE_SCHEMA_REGISTRY", metavar="URL",
                     help="Confluent-compatible Schema Registry: records are written in the "
                          "Confluent framing (schema id) and read by id. Without it, the "
                          "schema fingerprint travels in a header."),
        click.option("--schema-registry-username", envvar="KTRACE_SCHEMA_REGISTRY_USERNAME",
                     help="Basic-auth user for the registry."),
        click.option("--schema-registry-password", envvar="KTRACE_SCHEMA_REGISTRY_PASSWORD",
                     help="Better given by the environment variable than on the command line."),
        click.option("--schema-registry-cafile", type=click.Path(exists=True, dir_okay=False),
                     help="CA bundle to verify the registry's TLS certificate."),
        click.option("--subject-name-strategy", type=click.Choice(SUBJECT_STRATEGIES),
                     default="topic", show_default=True,
                     help="Subject of a topic's schema: topic = <topic>-value "
                          "(TopicNameStrategy), topic-record = <topic>-io.ktrace.Record."),
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from transports.kafka.settings import KafkaSettings
        from transports.kafka.registry import RegistrySettings
        bootstrap = kwargs.pop("bootstrap")
        registry_url = kwargs.pop("schema_registry")
        registry_auth = {k: kwargs.pop(f"schema_registry_{k}") for k in ("username", "password", "cafile")}
        strategy = kwargs.pop("subject_name_strategy")
        registry = (RegistrySettings(url=registry_url, subject_strategy=strategy, **registry_auth)
                    if registry_url else None)
        if registry is not None and not bootstrap and not recorded_bootstrap:
            raise click.UsageError("--schema-registry needs --kafka")
        settings = dict(
            security_protocol=kwargs.pop("kafka_security_protocol"),
            sasl_mechanism=kwargs.pop("kafka_sasl_mechanism"),
            sasl_username=kwargs.pop("kafka_sasl_username"),
            sasl_password=kwargs.pop("kafka_sasl_password"),
            ssl_cafile=kwargs.pop("kafka_ssl_cafile"),
            ssl_certfile=kwargs.pop("kafka_ssl_certfile"),
            ssl_keyfile=kwargs.pop("kafka_ssl_keyfile"),
            connect_timeout_s=kwargs.pop("kafka_timeout"),
            schema_registry=registry,
        )
        given = bootstrap or ("" if recorded_bootstrap else None)
        kwargs["kafka"] = None if given is None else KafkaSettings(bootstrap=given, **settings)
        return func(*args, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def redaction_options(func: Callable) -> Callable:
    """--redact PATH (repeatable) and --no-redact, the same on every path into storage."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs["no_redact"] and kwargs["redact"]:
            raise click.UsageError("--redact and --no-redact contradict each other")
        return func(*args, **kwargs)

    wrapper = click.option("--no-redact", is_flag=True,
                           help="Store env values and last-applied configuration as sent "
                                "(Secrets are refused all the same).")(wrapper)
    return click.option("--redact", multiple=True, metavar="PATH",
                        help="Also redact this JSONPath-ish path, e.g. "
                             "\"metadata.annotations['x/token']\".")(wrapper)


class SizeType(click.ParamType):
    """A byte count: ``500M``, ``10G``, ``1.5T`` (binary units) or plain bytes."""

    name = "SIZE"
    _UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        text = str(value).strip().upper().removesuffix("B").removesuffix("I")
        number, unit = (text[:-1], text[-1]) if text[-1:] in self._UNITS else (text, "")
        try:
            size = int(float(number) * self._UNITS[unit])
        except ValueError:
            self.fail(f"{value!r} is not a size like 500M or 10G", param, ctx)
        if size <= 0:
            self.fail(f"{value!r} must be more than 0", param, ctx)
        return size


class DurationType(click.ParamType):
    """A duration as kubectl's --since takes it — ``90s``, ``2h30m``, ``1.5h``, ``7d`` — or
    a bare number of seconds (these flags took seconds before they took durations)."""

    name = "DURATION"

    def __init__(self, *, allow_zero: bool = False) -> None:
        self.allow_zero = allow_zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if str(value).strip().startswith("-"):
            self.fail(f"{value!r}: a duration cannot be negative", param, ctx)
        try:
            seconds = parse_duration(str(value), bare_seconds=True)
        except KtraceError as exc:
            self.fail(str(exc), param, ctx)
        if seconds == 0 and not self.allow_zero:
            self.fail(f"{value!r} must be more than 0", param, ctx)
        return seconds


def duration_option(*decls: str, default: float, allow_zero: bool = False,
                    **kwargs: Any) -> Callable:
    """A DURATION option whose default reads as the flag takes it (``30s``, not ``30.0``)."""
    return click.option(*decls, type=DurationType(allow_zero=allow_zero),
                        default=spell_duration(default), show_default=True, **kwargs)


def namespace_option(func: Callable) -> Callable:
    """-n of a command that loads: only this namespace's records."""
    return click.option("-n", "--namespace", help="Only this namespace.")(func)


def loaded_namespace_option(func: Callable) -> Callable:
    """-n of a command that loads a recording: the namespace and what its objects need."""
    return click.option("-n", "--namespace",
                        help="Only this namespace, with the Nodes, volumes and StorageClasses "
                             "its objects use and the Namespace itself.")(func)


def _kinds(ctx: click.Context, param: click.Parameter,
           values: tuple[str, ...]) -> frozenset[str] | None:
    from schemas.kinds import UnknownKind, kind_name
    try:
        kinds = frozenset(kind_name(v).kind for value in values for v in value.split(",")
                          if v.strip())
    except UnknownKind as exc:
        raise click.BadParameter(str(exc), ctx, param) from exc
    return kinds or None


def kinds_option(func: Callable) -> Callable:
    """--kinds of a command that loads a recording: only these kinds' topics are read."""
    return click.option("--kinds", multiple=True, metavar="KIND[,KIND…]", callback=_kinds,
                        help="Load only these kinds (any name kubectl takes; repeatable); "
                             "the other kinds' topics are not read.")(func)


def html_option(func: Callable) -> Callable:
    """--html FILE (``html_path``): also write the incident report there."""
    return click.option("--html", "html_path", type=click.Path(dir_okay=False, writable=True),
                        help="Also write the incident report here: one self-contained, "
                             "offline HTML file (see docs/report.md).")(func)
