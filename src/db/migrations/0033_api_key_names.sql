-- API keys get a name people choose (shown in the cabinet's key list) and the
-- time of their last use. last_used_at is written at most once a minute per key
-- (merchant-service.ts), so the authentication path does not write per request.
alter table api_keys add column name text not null default '' check (length(name) <= 100);
alter table api_keys add column last_used_at timestamptz;
