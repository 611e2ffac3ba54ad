-- A webhook retry or postponement scheduled less than a minute ahead also wakes
-- the delivery workers (migration 0014 woke them only for deliveries due at
-- once). A worker that records its own attempts knows their retry times, but a
-- retry written by someone else (the inline test send of POST /v1/webhooks/test,
-- another worker process that then stops) would otherwise wait for the next
-- 30 s backstop pass. Woken early, a worker claims nothing yet, asks for the next
-- due time and sleeps until exactly then.
drop trigger webhook_deliveries_due_notify on webhook_deliveries;

create trigger webhook_deliveries_due_notify
  after insert or update on webhook_deliveries
  for each row
  when (new.status = 'pending' and new.locked_until is null and new.next_attempt_at < new.updated_at + interval '60 seconds')
  execute function notify_webhook_delivery_due();
