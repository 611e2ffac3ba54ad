-- API keys get a name people choose (shown in the cabinet's key list) and the
-- time of their last use. last_used_at is written at most once a minute per key
-- (merchant-service.ts), so the authentication path does not write per request.
alter table api_keys add column name text not null default '' check (length(name) <= 100);
alter table api_keys add column last_used_at timestamptz;

-- The key caches hold a key's shop, scopes and revocation: only a change of those (or a
-- deletion) tells every instance to drop the key. Writing its name or its last use must not,
-- or every key's first request of a minute would empty the caches of every instance.
drop trigger api_keys_changed_notify on api_keys;
create trigger api_keys_changed_notify
  after update of shop_id, key_hash, scopes, revoked_at or delete on api_keys
  for each row
  execute function notify_api_key_changed();
