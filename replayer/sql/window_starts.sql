-- model: state
-- Where a source was loaded from a window's start (``replay --since``, ``incident``): its
-- records received before ``since`` are each object's last version as of then, loaded so
-- the state at the window's start is known (replayer/window_start.py) — a snapshot, not a
-- stretch the recorder delivered: sequence holes and session coverage leave them out.
(source_id INTEGER, since TIMESTAMP)
