-- The audit log: who did what, when, from where, and what changed. Append-only:
-- rows are inserted in the transaction of the change they describe and never
-- updated or deleted (a trigger refuses both).
create table audit_events (
  id           text primary key,
  merchant_id  text references merchants (id),
  shop_id      text,
  -- 'user' (a cabinet user), 'api_key' (a call with an API key), 'operator' (the CLI), 'system'.
  actor_kind   text not null check (actor_kind in ('user', 'api_key', 'operator', 'system')),
  -- The user id, the key id, or null for the operator and the system.
  actor_id     text,
  -- What the actor was known as at the time (the user's email): the log stays readable after a removal.
  actor_label  text not null default '',
  action       text not null check (length(action) between 1 and 100),
  -- What the action touched: a key id, a user id, a shop id…
  target       text,
  ip           text not null default '',
  user_agent   text not null default '' check (length(user_agent) <= 500),
  -- What changed, as a small JSON object (before/after values, never a secret).
  details      jsonb not null default '{}'::jsonb,
  created_at   timestamptz not null
);
create index audit_events_merchant_created_idx on audit_events (merchant_id, created_at desc, id desc);
create index audit_events_actor_idx on audit_events (actor_id, created_at desc) where actor_id is not null;

create function audit_events_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'audit_events is append-only';
end;
$$;
create trigger audit_events_no_update before update or delete on audit_events
  for each row execute function audit_events_append_only();
