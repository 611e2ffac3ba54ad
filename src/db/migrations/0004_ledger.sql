-- The double-entry ledger (modelled on TigerBeetle). Accounts keep four running
-- totals; transfers are append-only and each moves one amount from a debit
-- account to a credit account of the same currency, so every transfer is
-- balanced by construction. A pending transfer (a reservation) is later closed
-- by exactly one post or void transfer that names it in pending_id.
create table ledger_accounts (
  id               text primary key,
  -- null for the gateway's own accounts (fees, settlement, hot wallet)
  merchant_id      text references merchants (id),
  currency         text not null check (currency in ('RUB', 'USDT')),
  kind             text not null check (kind in ('main', 'payout', 'fees', 'settlement', 'hot_wallet')),
  -- TigerBeetle's flag: debits_pending + debits_posted may never exceed credits_posted.
  debits_must_not_exceed_credits boolean not null,
  debits_pending   int8 not null default 0 check (debits_pending >= 0),
  debits_posted    int8 not null default 0 check (debits_posted >= 0),
  credits_pending  int8 not null default 0 check (credits_pending >= 0),
  credits_posted   int8 not null default 0 check (credits_posted >= 0),
  created_at       timestamptz not null,
  constraint ledger_accounts_owner_key unique nulls not distinct (merchant_id, currency, kind),
  constraint ledger_accounts_merchant_kind check ((merchant_id is null) = (kind in ('fees', 'settlement', 'hot_wallet'))),
  -- The last line of defence behind the service's own check: a merchant never goes below zero available.
  constraint ledger_accounts_no_overdraft check (
    not debits_must_not_exceed_credits or debits_pending + debits_posted <= credits_posted
  )
);

create table ledger_transfers (
  id                 text primary key,
  -- The caller's idempotency id: a repeat with it returns this transfer.
  idempotency_key    text not null check (length(idempotency_key) between 1 and 300),
  debit_account_id   text not null references ledger_accounts (id),
  credit_account_id  text not null references ledger_accounts (id),
  amount             int8 not null check (amount >= 0),
  currency           text not null check (currency in ('RUB', 'USDT')),
  type               text not null check (length(type) between 1 and 40),
  reference_type     text not null check (length(reference_type) between 1 and 40),
  reference_id       text not null check (length(reference_id) between 1 and 300),
  -- pending: a reservation; posted: moved (a plain transfer or the post of a reservation); voided: the void of a reservation.
  status             text not null check (status in ('pending', 'posted', 'voided')),
  -- For a post or void: the pending transfer it closes.
  pending_id         text references ledger_transfers (id),
  -- Linked transfers share the id of the chain's first transfer; they commit together or not at all.
  chain_id           text not null,
  created_at         timestamptz not null,
  constraint ledger_transfers_idempotency_key unique (idempotency_key),
  constraint ledger_transfers_distinct_accounts check (debit_account_id <> credit_account_id),
  constraint ledger_transfers_resolution check ((status <> 'pending' or pending_id is null) and (status <> 'voided' or pending_id is not null))
);
-- A reservation is posted or voided at most once.
create unique index ledger_transfers_pending_id_key on ledger_transfers (pending_id) where pending_id is not null;
create index ledger_transfers_debit_idx on ledger_transfers (debit_account_id);
create index ledger_transfers_credit_idx on ledger_transfers (credit_account_id);

-- The history: one entry per account a transfer changed, with the signed change
-- of that account's available balance and the available balance after it.
create table ledger_operations (
  seq              bigserial primary key,
  id               text not null unique,
  account_id       text not null references ledger_accounts (id),
  transfer_id      text not null references ledger_transfers (id),
  -- The transfer whose type, reference and status the entry shows: the reservation for a post or void.
  origin_id        text not null references ledger_transfers (id),
  amount           int8 not null,
  balance_after    int8 not null,
  created_at       timestamptz not null
);
create index ledger_operations_account_seq_idx on ledger_operations (account_id, seq desc);
