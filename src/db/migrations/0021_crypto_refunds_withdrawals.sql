-- Refunds of deposits and cabinet withdrawals (src/crypto/refunds/,
-- src/crypto/withdrawals/, docs/refunds-and-withdrawals.md). Both send USDT
-- from the hot wallet through the sign-once executor (crypto_outgoing_transfers,
-- migration 0019); the resource, its ledger reservation and its queued transfer
-- are written in one transaction.

-- A refund sends what one or more deposits brought (an invoice's credited
-- deposits, or one deposit) back, minus the network fee, in ONE transfer.
create table crypto_refunds (
  id                        text primary key,
  shop_id                   text not null references shops (id),
  external_id               text not null check (length(external_id) between 1 and 100),
  -- What was asked for: exactly one of a deposit and an invoice.
  deposit_id                text references crypto_deposits (id),
  invoice_id                text references crypto_invoices (id),
  -- The deposits were held (a blocked wallet, never credited): the merchant's balance is not touched.
  held                      boolean not null,
  network                   text not null check (network = 'TRC20'),
  chain                     text not null check (chain in ('tron-sandbox', 'tron-live')),
  recipient_address         text not null check (length(recipient_address) = 34),
  -- The deposits' sum; it is what the refund takes (recipient amount + network fee).
  deposits_micro            int8 not null check (deposits_micro > 0),
  amount_micro              int8 not null check (amount_micro > 0),
  network_fee_micro         int8 not null check (network_fee_micro >= 0),
  trx_usdt_rate_micro       int8 not null check (trx_usdt_rate_micro > 0),
  network_fee_actual_micro  int8 check (network_fee_actual_micro >= 0),
  status                    text not null check (status in ('pending', 'processing', 'completed', 'failed')),
  outgoing_transfer_id      text not null unique references crypto_outgoing_transfers (id),
  tx_hash                   text check (tx_hash ~ '^[0-9a-f]{64}$'),
  error_code                text check (length(error_code) <= 64),
  error_message             text check (length(error_message) <= 1000),
  created_at                timestamptz not null,
  updated_at                timestamptz not null,
  completed_at              timestamptz,
  check ((deposit_id is null) <> (invoice_id is null)),
  check (deposits_micro = amount_micro + network_fee_micro),
  check ((status = 'completed') = (completed_at is not null)),
  check ((status = 'failed') = (error_code is not null)),
  unique (shop_id, external_id)
);
create index crypto_refunds_shop_created_idx on crypto_refunds (shop_id, created_at desc, id desc);

-- The deposits a refund sends back. A deposit is refunded at most once: the
-- partial unique index decides between concurrent requests. A failed refund
-- releases its deposits (released = true), so they can be refunded again.
create table crypto_refund_deposits (
  refund_id    text not null references crypto_refunds (id),
  deposit_id   text not null references crypto_deposits (id),
  amount_micro int8 not null check (amount_micro > 0),
  released     boolean not null default false,
  primary key (refund_id, deposit_id)
);
create unique index crypto_refund_deposits_once_idx on crypto_refund_deposits (deposit_id) where not released;

-- Per-shop withdrawal settings; a shop without a row needs no approval.
create table crypto_withdrawal_settings (
  shop_id            text primary key references shops (id),
  approval_required  boolean not null,
  updated_at         timestamptz not null
);

-- A merchant's USDT withdrawn from its main balance (the book of the shop's
-- mode) to its own address. Reserved at creation, also while it awaits
-- approval; queued to the executor when created (no approval) or approved.
create table crypto_withdrawals (
  id                        text primary key,
  merchant_id               text not null references merchants (id),
  shop_id                   text not null references shops (id),
  network                   text not null check (network = 'TRC20'),
  chain                     text not null check (chain in ('tron-sandbox', 'tron-live')),
  recipient_address         text not null check (length(recipient_address) = 34),
  amount_micro              int8 not null check (amount_micro > 0 and amount_micro <= 1000000000000000),
  network_fee_micro         int8 not null check (network_fee_micro >= 0),
  total_debit_micro         int8 not null,
  trx_usdt_rate_micro       int8 not null check (trx_usdt_rate_micro > 0),
  network_fee_actual_micro  int8 check (network_fee_actual_micro >= 0),
  status                    text not null check (status in ('awaiting_approval', 'pending', 'processing', 'completed', 'failed', 'rejected')),
  outgoing_transfer_id      text unique references crypto_outgoing_transfers (id),
  tx_hash                   text check (tx_hash ~ '^[0-9a-f]{64}$'),
  error_code                text check (length(error_code) <= 64),
  error_message             text check (length(error_message) <= 1000),
  requested_by              text not null check (length(requested_by) between 1 and 200),
  -- Who approved or rejected it, and when (null while it needs no decision or awaits one).
  decided_by                text check (length(decided_by) between 1 and 200),
  decided_at                timestamptz,
  reject_reason             text check (length(reject_reason) <= 500),
  created_at                timestamptz not null,
  updated_at                timestamptz not null,
  completed_at              timestamptz,
  check (total_debit_micro = amount_micro + network_fee_micro),
  check ((status = 'completed') = (completed_at is not null)),
  check ((status = 'failed') = (error_code is not null)),
  check ((status in ('awaiting_approval', 'rejected')) = (outgoing_transfer_id is null)),
  check ((decided_by is null) = (decided_at is null)),
  check (status <> 'rejected' or decided_by is not null)
);
create index crypto_withdrawals_merchant_created_idx on crypto_withdrawals (merchant_id, created_at desc, id desc);
