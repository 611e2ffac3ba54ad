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
