-- Idempotency records are kept for their 24 h window, then purged in batches by
-- the payments module's purge worker, which walks them by age.
create index payment_idempotency_keys_created_at_idx on payment_idempotency_keys (created_at);
