"""Structured logs: one JSON object per line (``--log-format json``) for log pipelines."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

import orjson

from schemas.formats import rfc3339


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "time": rfc3339(datetime.fromtimestamp(record.created, timezone.utc), 3),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(doc).decode()


def use_json_logs() -> None:
    """Switch every root handler (installed by the CLI) to JSON lines."""
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig()
    for handler in root.handlers:
        handler.setFormatter(JsonFormatter())
