-- Retention (docs/operations.md, "Retention and archive"): append-only tables
-- that age out are archived to files and then removed.
--
-- audit_events becomes partitioned by month of created_at: a month past its
-- retention is archived and its partition dropped whole, which costs no row
-- deletes, no dead tuples and no vacuum, and leaves the append-only trigger
-- untouched. The primary key must then hold the partition key.

-- The month partition of `parent` that holds `month_start`'s month (UTC), made
-- if missing. Rows the default partition caught for that month (written while
-- the partition did not exist yet) move into it first, since PostgreSQL refuses
-- to attach a partition whose rows the default partition holds.
create function create_month_partition(parent text, month_start date) returns text
language plpgsql as $$
declare
  first_day date := date_trunc('month', month_start)::date;
  lower_bound timestamptz := first_day::timestamp at time zone 'UTC';
  upper_bound timestamptz := (first_day + interval '1 month')::timestamp at time zone 'UTC';
  partition_name text := parent || '_p' || to_char(first_day, 'YYYYMM');
begin
  if to_regclass(partition_name) is not null then
    return partition_name;
  end if;
  execute format('create table %I (like %I including defaults including constraints)', partition_name, parent);
  -- The move deletes from the default partition: append-only triggers let this transaction's move through.
  perform set_config('paygate.moving_partition_rows', 'on', true);
  execute format(
    'with moved as (delete from %I where created_at >= %L and created_at < %L returning *) insert into %I select * from moved',
    parent || '_default', lower_bound, upper_bound, partition_name);
  perform set_config('paygate.moving_partition_rows', 'off', true);
  execute format('alter table %I attach partition %I for values from (%L) to (%L)',
    parent, partition_name, lower_bound, upper_bound);
  return partition_name;
end
$$;

alter table audit_events rename to audit_events_unpartitioned;
alter index audit_events_pkey rename to audit_events_unpartitioned_pkey;
alter index audit_events_merchant_created_idx rename to audit_events_unpartitioned_merchant_created_idx;
alter index audit_events_actor_idx rename to audit_events_unpartitioned_actor_idx;
drop trigger audit_events_no_update on audit_events_unpartitioned;

create table audit_events (
  id           text not null,
  merchant_id  text references merchants (id),
  shop_id      text,
  actor_kind   text not null check (actor_kind in ('user', 'api_key', 'operator', 'system')),
  actor_id     text,
  actor_label  text not null default '',
  action       text not null check (length(action) between 1 and 100),
  target       text,
  ip           text not null default '',
  user_agent   text not null default '' check (length(user_agent) <= 500),
  details      jsonb not null default '{}'::jsonb,
  created_at   timestamptz not null,
  primary key (id, created_at)
) partition by range (created_at);
-- Catches rows of a month whose partition is not made yet (a clock far ahead).
create table audit_events_default partition of audit_events default;
create index audit_events_merchant_created_idx on audit_events (merchant_id, created_at desc, id desc);
create index audit_events_actor_idx on audit_events (actor_id, created_at desc) where actor_id is not null;

create or replace function audit_events_append_only() returns trigger language plpgsql as $$
begin
  if current_setting('paygate.moving_partition_rows', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_events is append-only';
end;
$$;
create trigger audit_events_no_update before update or delete on audit_events
  for each row execute function audit_events_append_only();

-- A partition for every month that has rows, and for this month and the next three.
select create_month_partition('audit_events', month::date)
  from generate_series(
         date_trunc('month', least(now(), (select min(created_at) from audit_events_unpartitioned)) at time zone 'UTC'),
         date_trunc('month', now() at time zone 'UTC') + interval '3 months',
         interval '1 month') as month;

insert into audit_events
  (id, merchant_id, shop_id, actor_kind, actor_id, actor_label, action, target, ip, user_agent, details, created_at)
select id, merchant_id, shop_id, actor_kind, actor_id, actor_label, action, target, ip, user_agent, details, created_at
  from audit_events_unpartitioned;
drop table audit_events_unpartitioned;

-- Webhook events age out by bounded batched deletes, oldest first (their
-- deliveries are updated in place and referenced by id from the API, the claim
-- and the attempt log, so partitions would put created_at into every key and
-- lookup); this index finds the oldest events without reading the table.
create index webhook_events_created_idx on webhook_events (created_at, id);

-- One row per archive file: written first as 'writing' (the file may be
-- incomplete), then 'archived' in the transaction that removes its rows, so a
-- crash between the two leaves a 'writing' row whose file the next run removes
-- and writes again.
create table retention_archives (
  file_name    text primary key check (length(file_name) between 1 and 200),
  table_name   text not null,
  -- The month (YYYY-MM) the rows were created in.
  period       text not null check (period ~ '^\d{4}-\d{2}$'),
  state        text not null check (state in ('writing', 'archived')),
  row_count    int8 check (row_count >= 0),
  -- SHA-256 (hex) of the file's bytes.
  sha256       text check (sha256 ~ '^[0-9a-f]{64}$'),
  started_at   timestamptz not null,
  archived_at  timestamptz,
  check ((state = 'archived') = (row_count is not null and sha256 is not null and archived_at is not null))
);

-- One retention run at a time across processes (the worker of every gateway,
-- the CLI): the holder renews its lease as it goes; a crashed holder's lease
-- runs out.
create table retention_lease (
  singleton     boolean primary key default true check (singleton),
  holder        text,
  lease_until   timestamptz
);
insert into retention_lease (singleton) values (true);
