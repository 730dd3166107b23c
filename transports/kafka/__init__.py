"""The Kafka transport: ``settings`` (how to reach a cluster), ``framing`` (how a record's
body and headers travel in a message), ``registry`` (a Confluent-compatible Schema Registry
client), ``sink`` (confluent-kafka's producer) and ``source`` (its consumer)."""
