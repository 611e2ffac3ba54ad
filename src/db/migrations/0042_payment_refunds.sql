-- Refunds of RUB payments requested by merchants (docs/payments.md, "Refunds"):
-- one row per refund, written with its ledger reservation before the acquirer
-- is called, so a refund whose outcome the gateway never learned is asked about
-- again by the refund worker.
create table payment_refunds (
  id                        text primary key check (length(id) between 1 and 64),
  payment_id                uuid not null references payments (id),
  shop_id                   text not null,
  -- The capture refunded: the attempt that paid the payment; null for a sandbox
  -- payment paid by the test helper (no charge exists at the sandbox acquirer).
  attempt_id                text references payment_attempts (id),
  connector                 text not null check (length(connector) between 1 and 80),
  amount_kopecks            int8 not null check (amount_kopecks > 0),
  reason                    text check (length(reason) <= 500),
  status                    text not null check (status in ('pending', 'succeeded', 'failed')),
  failure_reason            text check (length(failure_reason) <= 200),
  provider_refund_reference text check (length(provider_refund_reference) <= 200),
  -- The refund worker's schedule for a pending refund: when to ask the acquirer next.
  next_check_at             timestamptz not null,
  lookups                   integer not null default 0,
  created_at                timestamptz not null,
  updated_at                timestamptz not null,
  resolved_at               timestamptz,
  check ((status = 'pending') = (resolved_at is null)),
  check ((status = 'failed') = (failure_reason is not null))
);
create index payment_refunds_payment_idx on payment_refunds (payment_id, created_at);
-- The refund worker's queue: refunds whose outcome is not known yet.
create index payment_refunds_pending_idx on payment_refunds (next_check_at) where status = 'pending';

-- The sandbox acquirer's book of refunds: several per charge (partial), one per
-- refund key, never more in total than the charge captured (checked under the
-- charge row's lock).
create table sandbox_acquirer_refunds (
  refund_key     text primary key check (length(refund_key) between 1 and 220),
  charge_key     text not null references sandbox_acquirer_charges (charge_key),
  amount_kopecks int8 not null check (amount_kopecks > 0),
  created_at     timestamptz not null
);
create index sandbox_acquirer_refunds_charge_idx on sandbox_acquirer_refunds (charge_key);
-- The one full refund a charge could have before (a capture held in suspense) moves into the book.
insert into sandbox_acquirer_refunds (refund_key, charge_key, amount_kopecks, created_at)
  select refund_key, charge_key, amount_kopecks, refunded_at from sandbox_acquirer_charges where refund_key is not null;
alter table sandbox_acquirer_charges drop column refund_key;
alter table sandbox_acquirer_charges drop column refunded_at;
