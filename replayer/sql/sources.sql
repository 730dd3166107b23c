-- model: state
-- The recordings loaded into this database, one row per source: `locator` says where it is
-- (local:<directory>, kafka:<bootstrap>, import), so an object not stored in raw_events is
-- fetched from it by the record's (topic, partition, offset); `load_filter` and
-- `store_objects` are what it was first loaded with (a resumed load must use the same).
(
    source_id INTEGER PRIMARY KEY, locator VARCHAR UNIQUE, load_filter VARCHAR,
    store_objects BOOLEAN)
