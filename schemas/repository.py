"""Schema versions shipped as package data, loaded through importlib.resources.

Each ``avsc/vN`` directory holds one complete version of the contract, one file per named
type called ``<fullname>.avsc`` (fastavro's convention). Old versions stay so that records
written by an older recorder still decode: the writer schema is found by its fingerprint.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from fastavro.repository.base import AbstractSchemaRepository, SchemaRepositoryError
from fastavro.schema import fingerprint, load_schema, to_parsing_canonical_form

from schemas.errors import SchemaError

RECORD_NAME = "io.ktrace.Record"


class _PackageDirRepository(AbstractSchemaRepository):
    """fastavro repository over one package-data directory (works from wheels and zips)."""

    def __init__(self, directory: Traversable) -> None:
        self._directory = directory

    def load(self, name: str) -> dict[str, Any]:
        entry = self._directory / f"{name}.avsc"
        try:
            return json.loads(entry.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise SchemaRepositoryError(f"no schema file {name}.avsc") from exc


@dataclass(frozen=True)
class SchemaVersion:
    version: int
    schema: Any  # fastavro's parsed schema
    fingerprint: bytes  # CRC-64-AVRO of the parsing canonical form, little-endian

    @property
    def fingerprint_hex(self) -> str:
        return self.fingerprint.hex()


def schema_fingerprint(parsed_schema: Any) -> bytes:
    """CRC-64-AVRO fingerprint, little-endian as Avro single-object encoding stores it."""
    digest = fingerprint(to_parsing_canonical_form(parsed_schema), "CRC-64-AVRO")
    return int(digest, 16).to_bytes(8, "little")


def _version_dirs() -> list[tuple[int, Traversable]]:
    root = resources.files("schemas") / "avsc"
    found = [(int(d.name[1:]), d) for d in root.iterdir() if d.is_dir() and d.name[1:].isdigit()]
    if not found:
        raise SchemaError("no schema versions found in the schemas package data")
    return sorted(found, key=lambda item: item[0])


@functools.cache
def all_versions() -> tuple[SchemaVersion, ...]:
    """Every shipped version of the Record schema, oldest first."""
    versions = []
    for number, directory in _version_dirs():
        try:
            parsed = load_schema(RECORD_NAME, repo=_PackageDirRepository(directory))
        except (SchemaRepositoryError, ValueError, KeyError) as exc:
            raise SchemaError(f"schema version v{number} is invalid: {exc}") from exc
        versions.append(SchemaVersion(number, parsed, schema_fingerprint(parsed)))
    return tuple(versions)


def current() -> SchemaVersion:
    """The version writers use and readers resolve into."""
    return all_versions()[-1]


@functools.cache
def by_fingerprint() -> dict[bytes, SchemaVersion]:
    return {v.fingerprint: v for v in all_versions()}
