"""The local log, the embedded default transport: ``layout`` (the segment files' bytes,
positions and retention), ``sink`` (the writer) and ``source`` (the reader, by position or
by receive time)."""
