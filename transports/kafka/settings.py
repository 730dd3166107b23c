"""How to reach a Kafka cluster: the connection options both sides accept (TLS, SASL, and
the Schema Registry beside it), as librdkafka properties (confluent-kafka's producer, admin
client and consumer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transports.kafka.registry import RegistrySettings

#: Each optional setting: field → librdkafka property.
OPTIONAL = {
    "sasl_mechanism": "sasl.mechanisms",
    "sasl_username": "sasl.username",
    "sasl_password": "sasl.password",
    "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location",
    "ssl_keyfile": "ssl.key.location",
}


#: librdkafka's first wait before connecting again (doubled, with jitter, up to its
#: ``reconnect.backoff.max.ms``). librdkafka 2.x drops the bootstrap connection once it has
#: learned the brokers and holds off the next connection for half of this wait: a client's
#: first answer took ~60 ms at the default 100 ms, ~20 ms at 10.
RECONNECT_BACKOFF_MS = 10


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

    def librdkafka_config(self) -> dict[str, Any]:
        """The connection options as librdkafka properties (confluent-kafka's clients)."""
        config: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": self.security_protocol,
            "client.id": self.client_id,
            "reconnect.backoff.ms": RECONNECT_BACKOFF_MS,
        }
        given = ((name, getattr(self, field)) for field, name in OPTIONAL.items())
        return config | {name: value for name, value in given if value is not None}

    @property
    def request_timeout_ms(self) -> int:
        """How long a request may wait for its answer: well past the connect timeout."""
        return int(max(self.connect_timeout_s, 5) * 1000) + 20_000
