"""Real services (Kafka, a Kubernetes control plane) that the tests start without Docker."""
