-- The delivery worker's due-time read (webhook-repository.ts, nextDeliveryDueAt) as a
-- function, its plan pinned as the claim's is (0005, 0011).
--
-- On a year-old table the statistics count next to no pending delivery among millions
-- delivered, however long the queue is right now. Both candidate indexes then look like
-- one row: the due index in time order, and (status, shop_id, created_at), which holds
-- the pending rows too. Measured on a table of 12,000,000 deliveries with 3,000 pending,
-- the planner took the second and sorted, reading every pending row on each read (8 ms,
-- 2,645 buffers) where walking the due index in order stops at the first row ahead.
-- With sorts off, only the due index gives that order.
create function webhook_deliveries_next_due_at(p_now timestamptz)
returns timestamptz
language sql
stable
set enable_sort = off
set enable_bitmapscan = off
as $$
  select least(
    -- The earliest retry or postponement still ahead.
    (select d.next_attempt_at from webhook_deliveries d
      where d.status = 'pending' and d.next_attempt_at > p_now
      order by d.next_attempt_at
      limit 1),
    -- The earliest lease to run out among the due rows (another worker's attempts in flight):
    -- the due index walked in order up to now.
    (select min(leased.locked_until)
       from (select d.locked_until from webhook_deliveries d
              where d.status = 'pending' and d.next_attempt_at <= p_now and d.locked_until > p_now
              order by d.next_attempt_at) as leased)
  )
$$;
