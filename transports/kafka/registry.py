"""A small client for a Confluent-compatible Schema Registry (Confluent, Apicurio's
``/apis/ccompat/v7``, Karapace): register a schema under a subject, keep its compatibility
level, fetch a schema by id. Standard library only; every request has a timeout, and
connection failures and 5xx answers are retried a few times before they become one error.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from schemas.errors import KtraceError, TransportError

if TYPE_CHECKING:
    import urllib.error

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
#: Levels under which a reader with the newest schema reads every older one, as ktrace needs.
BACKWARD_LEVELS = frozenset({"BACKWARD", "BACKWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE"})
SUBJECT_STRATEGIES = ("topic", "topic-record")


class RegistryUnavailable(TransportError):
    """The registry did not answer (connection refused, timeout, 5xx after retries)."""


class RegistryRefused(KtraceError):
    """The registry answered with an error (unknown id, incompatible or invalid schema)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, kw_only=True)
class RegistrySettings:
    url: str
    username: str | None = None
    password: str | None = None
    cafile: str | None = None
    #: ``topic``: subject ``<topic>-value`` (TopicNameStrategy); ``topic-record``:
    #: ``<topic>-<record fullname>`` (TopicRecordNameStrategy).
    subject_strategy: str = "topic"
    timeout_s: float = 10.0
    retries: int = 3

    def subject(self, topic: str, record_name: str) -> str:
        return f"{topic}-value" if self.subject_strategy == "topic" else f"{topic}-{record_name}"


class RegistryClient:
    def __init__(self, settings: RegistrySettings) -> None:
        import ssl  # here, with urllib.request: the CLI reads this module's settings at start
        self.settings = settings
        self._base = settings.url.rstrip("/")
        self._context = ssl.create_default_context(cafile=settings.cafile) if settings.cafile else None
        self._auth = None
        if settings.username is not None:
            token = f"{settings.username}:{settings.password or ''}".encode()
            self._auth = "Basic " + base64.b64encode(token).decode()

    def register(self, subject: str, schema: str) -> int:
        """The id of ``schema`` under ``subject``, registering it as a new version if needed."""
        answer = self._call("POST", f"/subjects/{quote(subject, safe='')}/versions",
                            {"schema": schema})
        return int(answer["id"])

    def schema(self, schema_id: int) -> dict[str, Any]:
        """``{"schema": "<json>", "schemaType": ...}`` as the registry stores it."""
        return self._call("GET", f"/schemas/ids/{schema_id}")

    def compatibility(self, subject: str) -> str | None:
        """The subject's own level, or None when it has none (the global one applies)."""
        try:
            answer = self._call("GET", f"/config/{quote(subject, safe='')}")
        except RegistryRefused as exc:
            if exc.status == 404:
                return None
            raise
        return answer.get("compatibilityLevel") or answer.get("compatibility")

    def set_compatibility(self, subject: str, level: str) -> None:
        self._call("PUT", f"/config/{quote(subject, safe='')}", {"compatibility": level})

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        import urllib.error
        import urllib.request
        url = self._base + path
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": CONTENT_TYPE, "Content-Type": CONTENT_TYPE}
        if self._auth:
            headers["Authorization"] = self._auth
        problem = ""
        for attempt in range(self.settings.retries):
            if attempt:
                time.sleep(0.25 * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=self.settings.timeout_s,
                                            context=self._context) as response:
                    return json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as exc:
                message = _error_message(exc)
                if exc.code < 500:
                    raise RegistryRefused(message, exc.code) from exc
                problem = f"HTTP {exc.code}: {message}"
            except (urllib.error.URLError, OSError) as exc:  # refused, reset, timeout, TLS
                problem = str(getattr(exc, "reason", exc))
        raise RegistryUnavailable(f"schema registry {self._base} unavailable "
                                  f"({method} {path}: {problem})")


def _error_message(exc: urllib.error.HTTPError) -> str:
    """The registry's own ``message``, without the Java exception class Apicurio prefixes."""
    text = exc.read().decode(errors="replace")
    try:
        message = str(json.loads(text).get("message", text))
    except (ValueError, AttributeError):
        message = text or exc.reason
    head, sep, tail = message.partition("Exception: ")
    return tail if sep and " " not in head else message
