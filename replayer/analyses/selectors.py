"""kubectl's selectors as parameterised SQL conditions: ``-l`` label selectors (``app=web``,
``tier!=db``, ``env in (a,b)``, ``env notin (c)``, ``canary``, ``!canary``) over a
``labels`` MAP column, and ``--field-selector`` (``status.phase=Running``,
``spec.nodeName!=n1``) over the columns a command names for each field."""

from __future__ import annotations

import re
from typing import Any, Mapping

from schemas.errors import KtraceError

Condition = tuple[str, list[Any]]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_REQUIREMENT = re.compile(
    rf"^\s*(?:(?P<absent>!)\s*(?P<akey>{_KEY})"
    rf"|(?P<skey>{_KEY})\s*(?P<setop>in|notin)\s*\((?P<values>[^)]*)\)"
    rf"|(?P<key>{_KEY})\s*(?:(?P<op>==|!=|=)\s*(?P<value>[-A-Za-z0-9_.]*))?)\s*$")


class BadSelector(KtraceError):
    """A selector kubectl would not parse, or a field this command cannot select on."""


def _requirements(text: str) -> list[str]:
    """``a=b,c in (d,e)`` → its requirements (commas inside parentheses are values)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p for p in (*parts, current) if p.strip()]


def label_condition(selector: str | None, column: str = "labels") -> Condition:
    """SQL that is true where the ``column`` MAP matches every requirement of ``selector``."""
    if not selector:
        return "true", []
    sql, params = [], []
    for requirement in _requirements(selector):
        m = _REQUIREMENT.match(requirement)
        if m is None:
            raise BadSelector(f"cannot parse label selector {requirement.strip()!r} (expected "
                              "key=value, key!=value, key in (a,b), key notin (a), key or !key)")
        value = f"{column}[?]"
        if m["absent"]:
            sql.append(f"{value} IS NULL")
            params.append(m["akey"])
        elif m["setop"]:
            values = [v.strip() for v in m["values"].split(",") if v.strip()]
            negate = "NOT " if m["setop"] == "notin" else ""
            sql.append(f"{negate}coalesce(list_contains(?, {value}), false)")
            params += [values, m["skey"]]
        elif m["op"] == "!=":
            sql.append(f"{value} IS DISTINCT FROM ?")
            params += [m["key"], m["value"]]
        elif m["op"]:
            sql.append(f"{value} = ?")
            params += [m["key"], m["value"]]
        else:
            sql.append(f"{value} IS NOT NULL")
            params.append(m["key"])
    return " AND ".join(sql), params


def field_condition(selector: str | None, fields: Mapping[str, str]) -> Condition:
    """SQL for ``field=value``/``field!=value`` requirements; ``fields`` maps each field
    kubectl names (``status.phase``) to the column holding it."""
    if not selector:
        return "true", []
    sql, params = [], []
    for requirement in _requirements(selector):
        m = re.match(r"^\s*([A-Za-z.]+)\s*(==|!=|=)\s*(.*?)\s*$", requirement)
        if m is None:
            raise BadSelector(f"cannot parse field selector {requirement.strip()!r} "
                              "(expected field=value or field!=value)")
        field, op, value = m.groups()
        if field not in fields:
            raise BadSelector(f"field {field!r} cannot be selected here; choose from "
                              + ", ".join(fields))
        sql.append(f"{fields[field]} {'IS DISTINCT FROM' if op == '!=' else '='} ?")
        params.append(value)
    return " AND ".join(sql), params
