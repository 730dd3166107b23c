"""How to reach a Kafka cluster: the connection options both sides accept (TLS, SASL, and
the Schema Registry beside it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemas.registry import RegistrySettings


@dataclass(frozen=True, kw_only=True)
class KafkaSettings:
    bootstrap: str
    security_protocol: str = "PLAINTEXT"  # PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
    sasl_mechanism: str | None = None  # PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
    sasl_username: str | None = None
    sasl_password: str | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    client_id: str = "ktrace"
    #: How long a client may wait for a broker before it reports it unreachable.
    connect_timeout_s: float = 10.0
    #: A Confluent-compatible Schema Registry: the recorder writes the Confluent framing.
    schema_registry: RegistrySettings | None = None

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments every kafka-python client takes."""
        kwargs: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap.split(","),
            "security_protocol": self.security_protocol,
            "client_id": self.client_id,
            "request_timeout_ms": int(max(self.connect_timeout_s, 5) * 1000) + 20_000,
        }
        optional = {
            "sasl_mechanism": self.sasl_mechanism,
            "sasl_plain_username": self.sasl_username,
            "sasl_plain_password": self.sasl_password,
            "ssl_cafile": self.ssl_cafile,
            "ssl_certfile": self.ssl_certfile,
            "ssl_keyfile": self.ssl_keyfile,
        }
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        return kwargs
