"""Recording on while Kafka is away: ``spool`` (the bounded on-disk queue), ``sink`` (the
sink that fills it and drains it in order) and ``deadletter`` (records the broker refused
for good, kept beside the spool)."""
