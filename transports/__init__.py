"""How records travel between the recorder and the replayer: one folder per transport.

- ``sink``: the recorder's side, the ``Sink`` protocol and what a sink sends (``Outgoing``)
  or refuses (``RecordsRejected``);
- ``source``: the replayer's side, the ``Source`` protocol and what a source yields
  (``Delivery``, ``DeliveryRun``, ``Passed``, ``TopicSummary``);
- ``versions``: each object's last version before a window's start, what a source's
  ``last_versions`` gives (from a scan, or from where an index found them);
- ``locator``: ``open_source(locator)``, the one way to open a source by its name;
- ``kafka/``: a Kafka cluster (connection settings, the value framing, the Schema Registry
  client, the sink, the source);
- ``locallog/``: the embedded default, a directory of Avro container segments (their
  layout, their indexes by time, by object and by key, the sink, the source).

Transports import ``schemas`` (what the bytes mean) and never each other, the recorder or
the replayer (tests/test_layering.py).
"""
