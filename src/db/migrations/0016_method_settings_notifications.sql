-- A shop's method settings are cached per instance for payment creation
-- (src/payments/method-settings-cache.ts); a change notifies `shop:<id>` on the
-- channel of API keys and shops (src/db/notifications.ts), in the transaction of
-- the change, so every instance drops the shop's entry once it commits.
create function notify_method_settings_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_api_keys', 'shop:' || coalesce(new.shop_id, old.shop_id));
  return null;
end
$$;

create trigger payment_method_settings_changed_notify
  after insert or update or delete on payment_method_settings
  for each row
  execute function notify_method_settings_changed();
