-- Payouts and batch payouts (src/crypto/payouts/, docs/payouts-api.md): USDT sent
-- from the hot wallet to an address the merchant names. A payout is accepted
-- with its total_debit reserved in the ledger and its outgoing transfer queued
-- (crypto_outgoing_transfers, migration 0019) in one transaction; the executor's
-- outcomes move it pending -> processing -> completed | failed.

-- Per-shop payout settings; a shop without a row uses the defaults of
-- payout-settings.ts (enabled, 1 .. 1 000 000 USDT, no service fee).
create table crypto_payout_settings (
  shop_id                  text primary key references shops (id),
  enabled                  boolean not null,
  min_amount_micro         int8 not null check (min_amount_micro > 0),
  max_amount_micro         int8 not null check (max_amount_micro <= 1000000000000000),
  service_fee_fixed_micro  int8 not null check (service_fee_fixed_micro >= 0),
  service_fee_bps          int not null check (service_fee_bps between 0 and 10000),
  updated_at               timestamptz not null,
  check (min_amount_micro <= max_amount_micro)
);

create table crypto_payout_batches (
  id                 text primary key,
  shop_id            text not null references shops (id),
  external_id        text not null check (length(external_id) between 1 and 100),
  network            text not null check (network = 'TRC20'),
  status             text not null check (status in ('pending', 'processing', 'completed', 'partially_completed', 'failed')),
  item_count         int not null check (item_count between 1 and 500),
  total_debit_micro  int8 not null check (total_debit_micro > 0),
  created_at         timestamptz not null,
  updated_at         timestamptz not null,
  completed_at       timestamptz,
  check ((status in ('completed', 'partially_completed', 'failed')) = (completed_at is not null)),
  unique (shop_id, external_id)
);
create index crypto_payout_batches_shop_created_idx on crypto_payout_batches (shop_id, created_at desc, id desc);

create table crypto_payouts (
  id                        text primary key,
  shop_id                   text not null references shops (id),
  -- Unique per shop across single payouts and batch items alike.
  external_id               text not null check (length(external_id) between 1 and 100),
  batch_id                  text references crypto_payout_batches (id),
  -- A batch item's place in the request (0-based).
  batch_index               int check (batch_index between 0 and 499),
  network                   text not null check (network = 'TRC20'),
  chain                     text not null check (chain in ('tron-sandbox', 'tron-live')),
  recipient_address         text not null check (length(recipient_address) = 34),
  amount_micro              int8 not null check (amount_micro > 0 and amount_micro <= 1000000000000000),
  network_fee_micro         int8 not null check (network_fee_micro >= 0),
  service_fee_micro         int8 not null check (service_fee_micro >= 0),
  total_debit_micro         int8 not null,
  -- micro-USDT per TRX the network fee was quoted at; the actual fee is converted at the same rate.
  trx_usdt_rate_micro       int8 not null check (trx_usdt_rate_micro > 0),
  -- What the chain actually burned, in micro-USDT (null until the transfer is final).
  network_fee_actual_micro  int8 check (network_fee_actual_micro >= 0),
  status                    text not null check (status in ('pending', 'processing', 'completed', 'failed')),
  outgoing_transfer_id      text not null unique references crypto_outgoing_transfers (id),
  tx_hash                   text check (tx_hash ~ '^[0-9a-f]{64}$'),
  error_code                text check (length(error_code) <= 64),
  error_message             text check (length(error_message) <= 1000),
  created_at                timestamptz not null,
  updated_at                timestamptz not null,
  completed_at              timestamptz,
  check (total_debit_micro = amount_micro + network_fee_micro + service_fee_micro),
  check ((status = 'completed') = (completed_at is not null)),
  check ((status = 'failed') = (error_code is not null)),
  check ((batch_id is null) = (batch_index is null)),
  unique (shop_id, external_id),
  unique (batch_id, batch_index)
);
create index crypto_payouts_shop_created_idx on crypto_payouts (shop_id, created_at desc, id desc);
