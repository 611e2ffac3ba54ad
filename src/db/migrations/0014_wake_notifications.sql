-- Wake-ups instead of polling (docs/ARCHITECTURE.md, "Worker wake-up"). Each
-- trigger sends a NOTIFY in the transaction of the change, so listeners hear of
-- it only once it commits, and no domain code has to remember to send one.
-- Payloads are constants (src/db/notifications.ts): PostgreSQL folds identical
-- notifications of one transaction into one, so a batch wakes a worker once.
--
-- Only changes that make work due sooner than a worker's backstop pass (30 s,
-- src/polling-worker.ts) notify; the rest a worker finds by itself when it
-- asks for its next due time. A NOTIFY at commit takes a database-wide lock,
-- so the hot paths (payment creation, plain ledger transfers) send none.

-- A webhook delivery that can be attempted now: a new one (its first attempt
-- is due at once), one requeued, or one released unstarted by a stopping worker.
create function notify_webhook_delivery_due() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_work', 'webhook_delivery');
  return null;
end
$$;

create trigger webhook_deliveries_due_notify
  after insert or update on webhook_deliveries
  for each row
  when (new.status = 'pending' and new.locked_until is null and new.next_attempt_at <= new.updated_at)
  execute function notify_webhook_delivery_due();

-- A ledger reservation whose timeout runs out within a minute of its creation
-- (the expiry worker would otherwise learn of it only at its next backstop pass).
create function notify_reservation_expiry_soon() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_work', 'ledger_reservation_expiry');
  return null;
end
$$;

create trigger ledger_transfers_expiry_notify
  after insert on ledger_transfers
  for each row
  when (new.expires_at is not null and new.expires_at < new.created_at + interval '60 seconds')
  execute function notify_reservation_expiry_soon();

-- A payment past its expires_at is not expired while a card attempt on it is
-- unresolved; when the last such attempt resolves, it is due at once.
create function notify_payment_expiry_unblocked() returns trigger
language plpgsql as $$
begin
  if exists (select 1 from payments p where p.id = new.payment_id and p.status = 'pending' and p.expires_at <= new.updated_at) then
    perform pg_notify('paygate_work', 'payment_expiry');
  end if;
  return null;
end
$$;

create trigger payment_attempts_resolved_notify
  after update of status on payment_attempts
  for each row
  when (old.status in ('pending', 'requires_confirmation') and new.status not in ('pending', 'requires_confirmation'))
  execute function notify_payment_expiry_unblocked();

-- API keys and shops: every instance drops what its key cache holds of them
-- (revocation, scopes, a shop's mode or merchant; src/merchants/api-key-cache.ts).
create function notify_api_key_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_api_keys', 'key:' || old.id);
  return null;
end
$$;

create trigger api_keys_changed_notify
  after update or delete on api_keys
  for each row
  execute function notify_api_key_changed();

create function notify_shop_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_api_keys', 'shop:' || old.id);
  return null;
end
$$;

create trigger shops_changed_notify
  after update or delete on shops
  for each row
  execute function notify_shop_changed();
