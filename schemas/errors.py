"""Errors shared by both sides of the contract. The CLI turns them into one clear line."""


class KtraceError(Exception):
    """Base of every error ktrace raises on purpose."""


class SchemaError(KtraceError):
    """A schema file is missing or invalid."""


class DecodeError(KtraceError):
    """A record's bytes could not be decoded (corrupt, truncated or unknown schema)."""


class TransportError(KtraceError):
    """A transport (Kafka broker, local log directory) failed or cannot be reached."""
