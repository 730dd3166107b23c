"""A small Kubernetes API client of our own: credentials, raw HTTP(S), resource discovery.

No client library models: list pages are parsed with orjson, watch streams are read as bytes
line by line, so the recorder pays for JSON parsing once per event and nothing else.
"""
