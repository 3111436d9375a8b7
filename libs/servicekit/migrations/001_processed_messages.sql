-- The kit's own tables, in every service's schema (servicekit.runner applies them before the
-- service's migrations). processed_messages: the messages a consumer handled whose effect has no
-- natural key of its own (servicekit.idempotency.first_delivery), written in the effect's transaction.
CREATE TABLE IF NOT EXISTS processed_messages (
    consumer     text        NOT NULL,
    message_key  text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, message_key)
);
