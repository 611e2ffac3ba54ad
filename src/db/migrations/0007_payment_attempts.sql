-- Durable card attempts (docs/payments.md, "Charging durably"): a row is written
-- before every acquirer call, so a process that dies after the acquirer took the
-- money leaves an attempt whose outcome the reconciliation worker finds out.
create table payment_attempts (
  id              text primary key,
  payment_id      uuid not null references payments (id),
  -- The idempotency key sent to the acquirer with the charge: one charge per key.
  charge_key      text not null check (length(charge_key) between 1 and 200),
  connector       text not null check (length(connector) between 1 and 40),
  method          text not null check (method in ('card', 'sbp', 'sberpay')),
  -- What the payer is charged: amount plus the method's payer fee.
  amount_kopecks  int8 not null check (amount_kopecks > 0),
  -- pending: sent (or about to be), outcome unknown; requires_confirmation: the
  -- payer must confirm; abandoned: the acquirer never heard of it.
  status          text not null check (status in ('pending', 'requires_confirmation', 'succeeded', 'declined', 'abandoned')),
  decline_code    text check (length(decline_code) <= 100),
  -- Where a success went: the payment, or the suspense account (it could not be applied).
  applied_as      text check (applied_as in ('payment', 'suspense')),
  suspense_reason text check (suspense_reason in ('payment_already_paid', 'payment_expired', 'payment_failed')),
  -- The refund of a suspense item through the connector: requested before the call, refunded after.
  refund_status   text check (refund_status in ('requested', 'refunded')),
  refunded_at     timestamptz,
  -- The reconciliation worker's schedule: when to ask the acquirer next.
  next_check_at   timestamptz not null,
  lookups         integer not null default 0,
  created_at      timestamptz not null,
  updated_at      timestamptz not null,
  resolved_at     timestamptz,
  constraint payment_attempts_charge_key unique (charge_key),
  check ((status = 'succeeded') = (applied_as is not null)),
  check ((applied_as = 'suspense') = (suspense_reason is not null)),
  check (refund_status is null or applied_as = 'suspense'),
  check ((refund_status = 'refunded') = (refunded_at is not null))
);
create index payment_attempts_payment_idx on payment_attempts (payment_id);
-- The reconciliation queue: attempts whose outcome is not known yet.
create index payment_attempts_unresolved_idx on payment_attempts (next_check_at) where status in ('pending', 'requires_confirmation');
-- Captures held in suspense, for the operator's list.
create index payment_attempts_suspense_idx on payment_attempts (created_at) where applied_as = 'suspense';

-- The ledger's suspense account: captured money that no payment could take.
alter table ledger_accounts drop constraint ledger_accounts_kind_check;
alter table ledger_accounts add constraint ledger_accounts_kind_check
  check (kind in ('main', 'payout', 'fees', 'settlement', 'hot_wallet', 'suspense'));
alter table ledger_accounts drop constraint ledger_accounts_merchant_kind;
alter table ledger_accounts add constraint ledger_accounts_merchant_kind
  check ((merchant_id is null) = (kind in ('fees', 'settlement', 'hot_wallet', 'suspense')));

-- The sandbox acquirer, like a real one, captures a card order once, but the
-- card and the fast-payment rails are separate systems: a payer paying in two
-- tabs with two methods is charged twice (the gateway puts the second in suspense).
drop index sandbox_acquirer_charges_one_success;
create unique index sandbox_acquirer_charges_one_success on sandbox_acquirer_charges (payment_id, method) where status = 'succeeded';
-- Its refunds: one per charge, idempotent by the gateway's refund key.
alter table sandbox_acquirer_charges add column refund_key text unique check (length(refund_key) <= 220);
alter table sandbox_acquirer_charges add column refunded_at timestamptz;
