-- Transfers not final yet (queued or submitted) are a few hundred among millions:
-- the executor and custody read them by both statuses, which neither one-status
-- partial index serves, so each read scanned the table. Only columns already
-- indexed are keyed (no tx_id), so signing a transfer stays a HOT update.
create index crypto_outgoing_transfers_open_idx on crypto_outgoing_transfers (chain, status)
  where status in ('queued', 'submitted');
-- Attempts that may still land: the broadcaster's in-flight read and the result
-- scan's lowest reference block, without reading every attempt ever signed.
create index crypto_outgoing_attempts_pending_idx on crypto_outgoing_attempts (transfer_id) include (ref_block_number)
  where status = 'pending';
