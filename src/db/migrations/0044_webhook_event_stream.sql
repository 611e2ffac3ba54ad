-- The event stream (GET /v1/webhooks/stream, docs/webhooks.md "Event stream").
--
-- Resuming after an event must be exact, but event ids are made by the
-- application and commit in another order than they were made: a reader that
-- went by id could step over an event whose transaction committed after it
-- read. So each event records the id of the transaction that wrote it, and a
-- stream reads only events of transactions older than every transaction still
-- running (pg_snapshot_xmin): nothing can commit behind its position later.
-- Events are ordered by (tx_id, id). Added without a default first, so the
-- existing rows are not rewritten: they keep null and are never streamed.
alter table webhook_events add column tx_id xid8;
alter table webhook_events alter column tx_id set default pg_current_xact_id();

create index webhook_events_shop_stream_idx on webhook_events (shop_id, tx_id, id) where tx_id is not null;

-- Open streams of a shop wake up at the commit of its new events. One
-- notification per shop per statement (and PostgreSQL folds repeats within a
-- transaction), whatever the number of events.
create function notify_webhook_events_written() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_webhook_events', written.shop_id)
    from (select distinct shop_id from inserted_events) written;
  return null;
end
$$;

create trigger webhook_events_written_notify
  after insert on webhook_events
  referencing new table as inserted_events
  for each statement
  execute function notify_webhook_events_written();
