-- Transfers not final yet (queued or submitted) are a few hundred among millions:
-- the executor, custody and the energy reservations read them by both statuses,
-- which neither one-status partial index serves, so each read scanned the table.
create index crypto_outgoing_transfers_open_idx on crypto_outgoing_transfers (chain, status) include (tx_id)
  where status in ('queued', 'submitted');
-- Attempts that may still land: the broadcaster's in-flight read and the result
-- scan's lowest reference block, without reading every attempt ever signed.
create index crypto_outgoing_attempts_pending_idx on crypto_outgoing_attempts (transfer_id) include (ref_block_number)
  where status = 'pending';
