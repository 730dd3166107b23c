"""Errors shared by both sides of the contract. The CLI turns them into one clear line."""


class KtraceError(Exception):
    """Base of every error ktrace raises on purpose."""


class SchemaError(KtraceError):
    """A schema file is missing or invalid."""


class DecodeError(KtraceError):
    """A record's bytes could not be decoded (corrupt, truncated or unknown schema)."""


class TransportError(KtraceError):
    """A transport (Kafka broker, local log directory) failed or cannot be reached."""


class Unreadable(DecodeError):
    """A byte range of a log that could not be read (a corrupt block, a torn tail, a missing,
    empty or unreadable segment): the damage reported as data, ``[offset, end_offset)``."""

    problem = "unreadable"

    def __init__(self, cause: str, nbytes: int | None, end_offset: int) -> None:
        super().__init__(cause)
        self.cause, self.nbytes, self.end_offset = cause, nbytes, end_offset


class Retained(Unreadable):
    """Records removed by the local log's retention: an unseen stretch, not damage."""

    problem = "retention"
