-- Custody reconciliation (docs/custody.md): what we hold on chain (the hot
-- wallet and the deposit addresses not yet swept, read at the solidified
-- block) against what the ledger says we hold. One row per run and book; a
-- shortfall beyond the tolerance pauses the book's signing until an operator
-- acknowledges it (`paygate crypto reconcile --acknowledge`).
create table crypto_custody_reconciliations (
  id                         text primary key,
  book                       text not null check (book in ('sandbox', 'live')),
  asset                      text not null check (asset in ('USDT')),
  -- balanced: no shortfall beyond what was accepted and the tolerance; shortfall: beyond it;
  -- failed: the chain or the database could not be read (nothing is judged, the pause is unchanged).
  outcome                    text not null check (outcome in ('balanced', 'shortfall', 'failed')),
  started_at                 timestamptz not null,
  finished_at                timestamptz not null,
  -- The lower of the solidified blocks the node reported before and after the balances were read.
  solidified_block           int8 check (solidified_block >= 0),
  hot_wallet_micro           int8 check (hot_wallet_micro >= 0),
  deposit_addresses_micro    int8 check (deposit_addresses_micro >= 0),
  addresses_read             int4 not null default 0 check (addresses_read >= 0),
  -- The ledger's hot_wallet account: deposits credited (read before the chain) and
  -- outgoing transfers booked (read after it); transfers signed and not booked yet.
  deposits_credited_micro    int8,
  -- Of which from blocks above solidified_block (a node behind the watcher's): not expected on chain yet.
  deposits_above_block_micro int8 check (deposits_above_block_micro >= 0),
  outgoing_booked_micro      int8,
  outgoing_in_flight_micro   int8 check (outgoing_in_flight_micro >= 0),
  sweeps_in_flight_micro     int8 check (sweeps_in_flight_micro >= 0),
  -- What the ledger owes, by holder: merchants' balances (reserved outgoing included) and the gateway's fee accounts.
  merchant_balances_micro    int8,
  reserved_outgoing_micro    int8,
  gateway_fees_micro         int8,
  expected_micro             int8,
  -- on chain − expected: below zero is money missing.
  difference_micro           int8,
  shortfall_micro            int8 check (shortfall_micro >= 0),
  accepted_shortfall_micro   int8 not null check (accepted_shortfall_micro >= 0),
  tolerance_micro            int8 not null check (tolerance_micro >= 0),
  error_message              text check (length(error_message) <= 1000),
  check ((outcome = 'failed') = (error_message is not null)),
  check (outcome = 'failed' or (difference_micro is not null and shortfall_micro is not null))
);

create index crypto_custody_reconciliations_book_idx on crypto_custody_reconciliations (book, asset, started_at desc, id desc);

-- Per book: whether its signing is paused, by which run, and the shortfall an operator accepted.
create table crypto_custody_books (
  book                       text not null check (book in ('sandbox', 'live')),
  asset                      text not null check (asset in ('USDT')),
  paused_since               timestamptz,
  paused_by_reconciliation   text references crypto_custody_reconciliations (id),
  accepted_shortfall_micro   int8 not null default 0 check (accepted_shortfall_micro >= 0),
  updated_at                 timestamptz not null,
  primary key (book, asset),
  check ((paused_since is null) = (paused_by_reconciliation is null))
);

-- Every acknowledgement: who resumed signing, when, after which run, accepting what.
create table crypto_custody_acknowledgements (
  id                         text primary key,
  book                       text not null check (book in ('sandbox', 'live')),
  asset                      text not null check (asset in ('USDT')),
  reconciliation_id          text not null references crypto_custody_reconciliations (id),
  accepted_shortfall_micro   int8 not null check (accepted_shortfall_micro >= 0),
  acknowledged_by            text not null check (length(acknowledged_by) between 1 and 200),
  note                       text check (length(note) <= 1000),
  acknowledged_at            timestamptz not null
);

-- A pause or a resume reaches every instance's cached pause state as soon as it commits
-- (src/crypto/custody/signing-pause.ts), as a shop change does (migration 0014).
create function notify_custody_book_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_api_keys', 'custody:' || new.book);
  return null;
end
$$;

create trigger crypto_custody_books_changed_notify
  after insert or update on crypto_custody_books
  for each row
  execute function notify_custody_book_changed();
