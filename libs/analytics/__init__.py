"""Analytics: the table event stream as tables and pictures.

* `archive`: a durable consumer that writes every message of the table event
  stream to Parquet files partitioned by date, before the stream's retention
  can drop it (the stream stays replayable from the archive).
* `export`: the stream (from NATS, or from the archive) into DuckDB, exactly
  once per (table_id, seq) even across a kill -9; one table per event type,
  an `events` envelope table, views analysts ask for, and a dead-letter table.
* `report`: plots (matplotlib) and an HTML page from an exported DuckDB file.

Columns come from the protobuf descriptors of `monopoly.v1`, so the tables
follow the published schema (docs/SCHEMA.md), not the engine's internals.
"""
