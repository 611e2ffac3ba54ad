-- Delivery engine, faster and steady under bursts (measured in docs/webhooks.md, "Performance").

-- A claim only touches unindexed columns (lease), so with room left on the page
-- PostgreSQL updates the row in place (a HOT update, no new index entries).
alter table webhook_deliveries set (fillfactor = 70);

-- An attempt's event is its delivery's event; the delivery's key already holds
-- it to an existing row, and a second foreign-key check per attempt costs as
-- much as the rest of the attempt's insert.
alter table webhook_attempts drop constraint webhook_attempts_event_id_fkey;

-- The claim. It is a function only so that its plan can be pinned: right after
-- a burst of events the table's statistics still say "few rows are due", and
-- the planner would then read and sort every due row on each claim instead of
-- walking the due index in order and stopping after `p_limit` rows.
create function claim_webhook_deliveries(p_now timestamptz, p_locked_until timestamptz, p_lease_token text, p_limit integer)
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
         e.payload, s.webhook_secret, s.previous_webhook_secret, s.previous_webhook_secret_expires_at
    from claimed c
    join webhook_events e on e.id = c.event_id
    join shops s on s.id = c.shop_id
$$;
