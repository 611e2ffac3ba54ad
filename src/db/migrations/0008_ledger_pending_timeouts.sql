-- Reservations with a timeout (TigerBeetle's pending timeout): a pending transfer
-- may carry the number of seconds it may stay open; past expires_at it cannot be
-- posted, and the ledger's expiry worker voids it, giving the money back.
alter table ledger_transfers add column timeout_seconds int4 check (timeout_seconds is null or timeout_seconds > 0);
alter table ledger_transfers add column expires_at timestamptz;
alter table ledger_transfers add constraint ledger_transfers_timeout_only_pending
  check ((timeout_seconds is null) = (expires_at is null) and (expires_at is null or status = 'pending'));
-- The expiry worker's queue: open reservations with a deadline, soonest first.
create index ledger_transfers_expiring_idx on ledger_transfers (expires_at) where expires_at is not null;
-- Reversals of a transfer are summed under its accounts' locks to cap them.
create index ledger_transfers_reference_idx on ledger_transfers (reference_type, reference_id);
