-- Changing webhook settings (endpoint, signing secret, resend, test sends) now needs
-- the `webhooks` scope. Keys that could already do it and hold a write scope keep
-- that power; keys with only `read` lose it, which is the point.
update api_keys
set scopes = array_append(scopes, 'webhooks')
where revoked_at is null
  and scopes && array['payments', 'crypto', 'payouts']::text[]
  and not ('webhooks' = any (scopes));
