-- One-time RUB payments, their per-shop method settings, the idempotency
-- records of POST /v1/payments, and the sandbox acquirer's own charge book.
create table payments (
  id                    uuid primary key,
  shop_id               text not null references shops (id),
  -- Short URL-safe code; the last path segment of payment_url.
  order_code            text not null check (length(order_code) between 6 and 32),
  status                text not null check (status in ('pending', 'paid', 'failed', 'expired')),
  amount_kopecks        int8 not null check (amount_kopecks between 100 and 100000000),
  amount_total_kopecks  int8 not null check (amount_total_kopecks >= amount_kopecks),
  currency              text not null check (currency = 'RUB'),
  -- The method bound at creation (null when the payer chooses on the page).
  method                text check (method in ('card', 'sbp', 'sberpay')),
  order_id              text check (length(order_id) <= 255),
  callback_url          text check (length(callback_url) <= 2048),
  created_at            timestamptz not null,
  expires_at            timestamptz not null,
  paid_at               timestamptz,
  -- How the payer actually paid, and the total charged (internal; the API shows `method`).
  paid_method           text check (paid_method in ('card', 'sbp', 'sberpay')),
  paid_total_kopecks    int8,
  failed_at             timestamptz,
  failure_reason        text,
  expired_at            timestamptz,
  check ((status = 'paid') = (paid_at is not null))
);
create unique index payments_order_code_key on payments (order_code);
create index payments_shop_created_idx on payments (shop_id, created_at desc, id desc);
create index payments_shop_order_id_idx on payments (shop_id, order_id, created_at desc, id desc);
-- The expiry worker's queue: only pending payments, in expiry order.
create index payments_pending_expiry_idx on payments (expires_at) where status = 'pending';

-- A shop's settings per method; a missing row means the documented defaults.
create table payment_method_settings (
  shop_id      text not null references shops (id),
  method       text not null check (method in ('card', 'sbp', 'sberpay')),
  enabled      boolean not null,
  min_kopecks  int8 not null check (min_kopecks >= 100),
  max_kopecks  int8 not null check (max_kopecks <= 100000000 and max_kopecks >= min_kopecks),
  -- Payer fee in basis points (1/100 of a percent), 0..10000.
  fee_bps      integer not null check (fee_bps between 0 and 10000),
  updated_at   timestamptz not null,
  primary key (shop_id, method)
);

-- Idempotency-Key records of POST /v1/payments (spec 4.1), scoped to the shop.
create table payment_idempotency_keys (
  shop_id          text not null references shops (id),
  idempotency_key  text not null check (length(idempotency_key) between 1 and 255),
  -- SHA-256 (hex) of the canonical JSON of the request body.
  request_hash     text not null,
  state            text not null check (state in ('in_progress', 'completed')),
  -- Who holds the in-progress record; completion must present it.
  lease_token      text not null,
  -- An in-progress record whose lease ran out (its process died) may be taken over.
  locked_until     timestamptz not null,
  response_status  integer,
  response_body    text,
  payment_id       uuid,
  created_at       timestamptz not null,
  primary key (shop_id, idempotency_key),
  check ((state = 'completed') = (response_body is not null))
);

-- The sandbox acquirer's book of charges (it stands in for a bank's system).
create table sandbox_acquirer_charges (
  -- The idempotency key the gateway presents: one charge per key, ever.
  charge_key     text primary key check (length(charge_key) <= 200),
  payment_id     uuid not null,
  method         text not null,
  amount_kopecks int8 not null,
  card_last4     text,
  status         text not null check (status in ('succeeded', 'declined', 'requires_confirmation', 'canceled')),
  decline_code   text,
  created_at     timestamptz not null,
  updated_at     timestamptz not null
);
-- An order is captured at most once by the acquirer, whatever the key.
create unique index sandbox_acquirer_charges_one_success on sandbox_acquirer_charges (payment_id) where status = 'succeeded';
