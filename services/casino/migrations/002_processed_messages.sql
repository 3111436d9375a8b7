-- The table events the consumer handled move to the kit's processed_messages
-- (servicekit.idempotency.first_delivery), keyed "<table_id>:<seq>" for the consumer casino-table-signals.
INSERT INTO processed_messages (consumer, message_key, processed_at)
SELECT 'casino-table-signals', table_id || ':' || seq, handled_at FROM handled_events
ON CONFLICT DO NOTHING;
DROP TABLE handled_events;
