"""Shared service plumbing: settings, JetStream, Postgres, outbox, gRPC, metrics, embedded servers."""
