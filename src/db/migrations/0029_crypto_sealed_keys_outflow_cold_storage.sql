-- The hot key sealed, the flow bounded (docs/security.md, docs/payouts.md).
--
-- The HD signing key of each book (the live signer's mnemonic or xprv, and the
-- generated sandbox seed), sealed by envelope encryption (src/kms/) under the
-- context "tron_signing_key:<book>:<xpub>", so a sealed key copied to another
-- row does not open. The account xpub sits beside it in clear: the API role
-- derives deposit addresses from it without ever opening the sealed key.
create table crypto_signing_keys (
  book        text primary key check (book in ('sandbox', 'live')),
  xpub        text not null check (xpub ~ '^xpub[1-9A-HJ-NP-Za-km-z]{100,120}$'),
  sealed_key  text not null check (length(sealed_key) between 1 and 8000),
  created_at  timestamptz not null
);

-- The hourly outflow cap (src/crypto/sending/outflow-cap.ts): every transfer
-- that takes USDT out of custody (payouts, refunds, withdrawals), at its latest
-- signing. A transfer counts against the rolling hour while signed_at is in it;
-- rows older than the hour are deleted as new ones are written.
create table crypto_outflow_signings (
  transfer_id  text primary key references crypto_outgoing_transfers (id),
  chain        text not null check (chain in ('tron-sandbox', 'tron-live')),
  amount       int8 not null check (amount > 0),
  signed_at    timestamptz not null
);
create index crypto_outflow_signings_window_idx on crypto_outflow_signings (chain, signed_at) include (amount);

-- Surplus above the hot-wallet ceiling moved to the operator's cold address
-- (src/crypto/cold-storage/): one row per move, through the sign-once executor
-- (a `cold_storage` outgoing transfer). The USDT stays in custody: no ledger
-- transfer; the executor books the TRX it burnt.
alter table crypto_outgoing_transfers drop constraint crypto_outgoing_transfers_purpose_check;
alter table crypto_outgoing_transfers add constraint crypto_outgoing_transfers_purpose_check
  check (purpose in ('payout', 'refund', 'withdrawal', 'sweep', 'gas_topup', 'cold_storage'));

create table crypto_cold_moves (
  id            text primary key,
  chain         text not null check (chain in ('tron-sandbox', 'tron-live')),
  to_address    text not null check (length(to_address) = 34),
  amount_micro  int8 not null check (amount_micro > 0),
  -- What the hot wallet held, and the ceiling, when the move was decided.
  hot_wallet_micro  int8 not null check (hot_wallet_micro >= 0),
  ceiling_micro     int8 not null check (ceiling_micro >= 0),
  status        text not null check (status in ('sending', 'completed', 'failed')),
  transfer_id   text not null references crypto_outgoing_transfers (id),
  tx_hash       text check (tx_hash ~ '^[0-9a-f]{64}$'),
  fee_sun       int8 check (fee_sun >= 0),
  error_code    text check (length(error_code) <= 64),
  error_message text check (length(error_message) <= 1000),
  created_at    timestamptz not null,
  updated_at    timestamptz not null,
  final_at      timestamptz,
  check ((status in ('completed', 'failed')) = (final_at is not null)),
  check ((status = 'failed') = (error_code is not null))
);
-- One move per book at a time: the next is decided from the balance after this one.
create unique index crypto_cold_moves_one_in_flight_idx on crypto_cold_moves (chain) where status = 'sending';
create index crypto_cold_moves_recent_idx on crypto_cold_moves (chain, created_at desc);
