-- The transactional outbox: an event row is written in the same transaction as
-- the state change that caused it. Delivery state lives beside it.
create table webhook_events (
  id               text primary key,
  shop_id          text not null references shops (id),
  type             text not null,
  -- The exact JSON body sent to the receiver, fixed at emit time (signatures cover these bytes).
  payload          text not null,
  -- Where it goes, resolved at emit time; null when the resource has no destination.
  destination_url  text,
  created_at       timestamptz not null
);
create index webhook_events_shop_created_idx on webhook_events (shop_id, created_at desc, id desc);
create index webhook_events_shop_type_created_idx on webhook_events (shop_id, type, created_at desc, id desc);

-- One delivery per event that has a destination. Workers claim due rows with
-- FOR UPDATE SKIP LOCKED and hold them by a lease (locked_until, lease_token):
-- a worker that dies mid-attempt loses its lease, and the row becomes due again.
create table webhook_deliveries (
  id               text primary key,
  event_id         text not null unique references webhook_events (id),
  shop_id          text not null references shops (id),
  url              text not null check (length(url) between 1 and 2048),
  status           text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempt_count    integer not null default 0 check (attempt_count >= 0),
  -- Automatic attempts stop at this count (a manual resend of a finished delivery allows one more).
  max_attempts     integer not null check (max_attempts >= 1),
  -- When the next attempt is due; null once the delivery is delivered or failed.
  next_attempt_at  timestamptz,
  locked_until     timestamptz,
  lease_token      text,
  last_attempt_at  timestamptz,
  created_at       timestamptz not null,
  updated_at       timestamptz not null,
  check ((status = 'pending') = (next_attempt_at is not null))
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';

-- Every attempt, successful or not, with what the receiver answered (truncated).
create table webhook_attempts (
  id               text primary key,
  delivery_id      text not null references webhook_deliveries (id),
  event_id         text not null references webhook_events (id),
  attempt_number   integer not null check (attempt_number >= 1),
  url              text not null,
  started_at       timestamptz not null,
  duration_ms      integer not null check (duration_ms >= 0),
  outcome          text not null check (outcome in ('succeeded', 'http_error', 'timeout', 'connection_error', 'refused')),
  status_code      integer,
  error            text check (length(error) <= 1000),
  response_body    text check (length(response_body) <= 4096),
  next_retry_at    timestamptz
);
create index webhook_attempts_event_idx on webhook_attempts (event_id, started_at desc, id desc);
