-- The sign-once executor (src/crypto/sending/, docs/payouts.md): every on-chain
-- transfer the gateway sends (payouts, refunds, withdrawals, sweeps, gas
-- top-ups), and every transaction it signed for one. A transfer is queued in the
-- owner's transaction (the payout row and its reservation commit with it); the
-- executor signs it ONCE, stores the signed bytes before the first broadcast,
-- and signs a new transaction only once the old one provably can never land.
--
-- queued: not signed yet (or its last attempt proven dead, a new one is due);
-- submitted: a signed attempt is on its way; confirmed / failed: final.
create table crypto_outgoing_transfers (
  id                     text primary key,
  chain                  text not null check (chain in ('tron-sandbox', 'tron-live')),
  purpose                text not null check (purpose in ('payout', 'refund', 'withdrawal', 'sweep', 'gas_topup')),
  owner_id               text not null check (length(owner_id) between 1 and 100),
  asset                  text not null check (asset in ('USDT', 'TRX')),
  from_kind              text not null check (from_kind in ('hot_wallet', 'deposit_address')),
  -- A deposit address and its derivation index; null for the hot wallet (derived at signing).
  from_address           text check (length(from_address) = 34),
  from_derivation_index  int8 check (from_derivation_index between 0 and 2147483647),
  to_address             text not null check (length(to_address) = 34),
  -- micro-USDT, or sun for TRX.
  amount                 int8 not null check (amount > 0),
  status                 text not null check (status in ('queued', 'submitted', 'confirmed', 'failed')),
  -- The current signed attempt's txID (set before its first broadcast).
  tx_id                  text check (tx_id ~ '^[0-9a-f]{64}$'),
  attempts               int not null default 0 check (attempts >= 0),
  fee_sun                int8 check (fee_sun >= 0),
  block_number           int8 check (block_number >= 0),
  error_code             text check (error_code in ('reverted', 'out_of_energy', 'expired', 'insufficient_hot_wallet_funds', 'address_blacklisted', 'invalid_address', 'rejected')),
  error_message          text check (length(error_message) <= 1000),
  -- Since when the hot wallet has been short of what this transfer needs (null: it was not).
  short_of_funds_since   timestamptz,
  created_at             timestamptz not null,
  updated_at             timestamptz not null,
  submitted_at           timestamptz,
  final_at               timestamptz,
  check ((from_kind = 'hot_wallet') = (from_address is null and from_derivation_index is null)),
  check (from_kind = 'hot_wallet' or (from_address is not null and from_derivation_index is not null)),
  check (asset = 'USDT' or purpose = 'gas_topup'),
  check ((status in ('confirmed', 'failed')) = (final_at is not null)),
  check ((status = 'failed') = (error_code is not null)),
  check (status = 'queued' or status = 'failed' or tx_id is not null)
);
-- The executor's queues: what to sign, and what to watch.
create index crypto_outgoing_transfers_queued_idx on crypto_outgoing_transfers (chain, created_at, id) where status = 'queued';
create index crypto_outgoing_transfers_submitted_idx on crypto_outgoing_transfers (chain, id) where status = 'submitted';
create index crypto_outgoing_transfers_owner_idx on crypto_outgoing_transfers (purpose, owner_id);

-- Every transaction signed for a transfer, kept for good: each txID is checked
-- on chain before a new one is signed, so no attempt can land unnoticed.
-- pending: may still land; dead: a solidified block is past its expiration and
-- it is not on chain; landed: on chain (its transfer's outcome).
create table crypto_outgoing_attempts (
  transfer_id       text not null references crypto_outgoing_transfers (id),
  attempt           int not null check (attempt >= 1),
  tx_id             text not null unique check (tx_id ~ '^[0-9a-f]{64}$'),
  -- The signed protobuf Transaction, exactly the bytes every broadcast sends.
  signed_hex        text not null check (signed_hex ~ '^([0-9a-f]{2})+$'),
  expiration        timestamptz not null,
  ref_block_number  int8 not null check (ref_block_number >= 0),
  fee_limit_sun     int8 not null check (fee_limit_sun >= 0),
  status            text not null check (status in ('pending', 'dead', 'landed')),
  broadcasts        int not null default 0 check (broadcasts >= 0),
  -- The last broadcast's answer: accepted, duplicate, rejected:<code>, unknown.
  last_broadcast    text check (length(last_broadcast) <= 200),
  signed_at         timestamptz not null,
  last_broadcast_at timestamptz,
  primary key (transfer_id, attempt)
);

-- One executor per chain at a time (the leader's lease), like the chain watcher,
-- and the last solidified block whose transaction results it has read (one
-- request per block finds the outcome of every transfer in it).
create table crypto_sending_leases (
  chain          text primary key check (chain in ('tron-sandbox', 'tron-live')),
  leader_token   text,
  lease_until    timestamptz,
  scanned_block  int8 check (scanned_block >= 0),
  updated_at     timestamptz not null
);

-- A queued transfer wakes the executor (one notification per statement: a batch wakes it once).
create function notify_outgoing_transfer_queued() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_work', 'outgoing_transfer');
  return null;
end
$$;

create trigger crypto_outgoing_transfers_queued_notify
  after insert on crypto_outgoing_transfers
  for each statement
  execute function notify_outgoing_transfer_queued();

-- Chain costs (docs/payouts.md): the fee every final outgoing transaction burned,
-- in micro-USDT at PAYGATE_TRX_USDT_RATE, debited to network_fees (which payouts
-- credit with the network fee they charge) and credited to network_costs, so
-- network_fees = charged minus spent.
alter table ledger_accounts drop constraint ledger_accounts_kind_check;
alter table ledger_accounts add constraint ledger_accounts_kind_check
  check (kind in ('main', 'payout', 'fees', 'settlement', 'hot_wallet', 'suspense', 'network_fees', 'network_costs'));
alter table ledger_accounts drop constraint ledger_accounts_merchant_kind;
alter table ledger_accounts add constraint ledger_accounts_merchant_kind
  check ((merchant_id is null) = (kind in ('fees', 'settlement', 'hot_wallet', 'suspense', 'network_fees', 'network_costs')));
