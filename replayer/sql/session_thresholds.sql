-- model: seed
-- How long before the end of the data a topic's last session may have stopped (or written
-- its last record) and still count as the end of that topic's recording, not as an unseen
-- stretch: shards stopped one after the other end together, and a live recorder writes a
-- BOOKMARK marker per watch about once a minute (when the API server sends bookmarks).
(name VARCHAR PRIMARY KEY, seconds DOUBLE,
                                               meaning VARCHAR)
VALUES
    ('silent_session_s', 180, 'a topic no session recorded during the last this many seconds '
     'of the data is unseen from its last record on')
