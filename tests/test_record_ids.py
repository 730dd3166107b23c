"""Evidence ids turned into record ids along the paths each result column's type gives
(replayer.analyses.record_ids.public_ids, through analyses.fetch), on a real recording."""

from __future__ import annotations

import re

from replayer.analyses import fetch
from tests.replayer_data import DATA, recording_fixtures

db_file, recorded = recording_fixtures(DATA / "edge" / "recording")

RECORD_ID = re.compile(r"^[a-z0-9.-]+:[0-9a-f]{8}:\d+$")
#: every place an answer holds event ids: a column, a list column, a cause's evidence inside
#: a list of structs, a struct's id beside a numeric field that is no id, a map's value
SHAPES = """
    SELECT first_id AS evidence_event_id, [first_id, last_id] AS evidence,
           [{'cause': 'x', 'score': 50, 'detail': 'pod ' || first_id, 'evidence': [last_id]}]
               AS causes,
           {'at': {'evidence_event_id': last_id, 'count': last_id}} AS nested,
           map(['a'], [{'evidence': [first_id]}]) AS by_name,
           first_id AS plain_id
    FROM (SELECT min(event_id) AS first_id, max(event_id) AS last_id FROM raw_events)
"""


def test_every_evidence_path_holds_record_ids(recorded):
    first, last = recorded.execute(
        "SELECT min(event_id), max(event_id) FROM raw_events").fetchone()
    _, [(one, ids, causes, nested, by_name, plain)] = fetch(recorded, SHAPES)
    assert RECORD_ID.match(one) and all(RECORD_ID.match(i) for i in ids)
    assert ids[0] == one and ids[1] != one
    [cause] = causes
    assert cause["evidence"] == [ids[1]]
    # what is not under an evidence key is left as it was, text and numbers alike
    assert (cause["detail"], cause["score"], plain) == (f"pod {first}", 50, first)
    assert nested == {"at": {"evidence_event_id": ids[1], "count": last}}
    assert by_name == {"a": {"evidence": [one]}}


def test_rows_without_ids_come_back_as_they_were(recorded):
    _, rows = fetch(recorded, "SELECT NULL::BIGINT AS evidence_event_id, "
                              "[]::BIGINT[] AS evidence, 'text' AS detail")
    assert rows == [(None, [], "text")]
