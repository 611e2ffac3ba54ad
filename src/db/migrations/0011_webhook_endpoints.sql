-- The webhooks module owns its settings: a shop's endpoint URL and signing
-- secrets (sealed, src/kms/) move out of the merchants' shops table into
-- webhook_endpoints, one row per shop, and the claim reads them from there.
create table webhook_endpoints (
  shop_id                             text primary key references shops (id),
  webhook_url                         text,
  webhook_secret                      text not null,
  previous_webhook_secret             text,
  previous_webhook_secret_expires_at  timestamptz
);
insert into webhook_endpoints (shop_id, webhook_url, webhook_secret, previous_webhook_secret, previous_webhook_secret_expires_at)
  select id, webhook_url, webhook_secret, previous_webhook_secret, previous_webhook_secret_expires_at from shops;

-- Same signature and plan settings as migration 0005; only the join changes.
create or replace function claim_webhook_deliveries(p_now timestamptz, p_locked_until timestamptz, p_lease_token text, p_limit integer)
returns table (
  delivery_id text, event_id text, shop_id text, url text, attempt_count integer, max_attempts integer, lease_token text,
  payload text, webhook_secret text, previous_webhook_secret text, previous_webhook_secret_expires_at timestamptz
)
language sql
set enable_sort = off
set enable_bitmapscan = off
as $$
  with claimed as (
    update webhook_deliveries
       set locked_until = p_locked_until, lease_token = p_lease_token, updated_at = p_now
     where id = any(array(
             select d.id from webhook_deliveries d
              where d.status = 'pending'
                and d.next_attempt_at <= p_now
                and (d.locked_until is null or d.locked_until <= p_now)
              order by d.next_attempt_at
              limit p_limit
                for update skip locked))
    returning id, event_id, shop_id, url, attempt_count, max_attempts, lease_token
  )
  select c.id, c.event_id, c.shop_id, c.url, c.attempt_count, c.max_attempts, c.lease_token,
         e.payload, w.webhook_secret, w.previous_webhook_secret, w.previous_webhook_secret_expires_at
    from claimed c
    join webhook_events e on e.id = c.event_id
    join webhook_endpoints w on w.shop_id = c.shop_id
$$;

alter table shops
  drop column webhook_url,
  drop column webhook_secret,
  drop column previous_webhook_secret,
  drop column previous_webhook_secret_expires_at;
