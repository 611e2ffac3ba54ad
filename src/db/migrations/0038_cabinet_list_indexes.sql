-- Indexes for the cabinet's tables (issue 27, "Performance"): every list of a
-- shop, with each of its filters, answers from an index on a shop of 1,000,000
-- payments and 1,000,000 deposits. Chosen by EXPLAIN (ANALYZE) of the list
-- queries on the loaded shop of `npm run bench:cabinet` (bench/cabinet-plans.ts);
-- the figures before and after are in docs/performance.md, "Cabinet", and
-- test/db/list-plans.test.ts fails if a list query reads one of these tables whole.

-- A shop's deposits newest first, by status, by amount and by address, and the
-- invoices by amount, are indexed by 0037 (crypto_deposits_shop_seen_idx,
-- crypto_deposits_shop_status_idx, crypto_deposits_shop_amount_idx,
-- crypto_deposits_address_idx, crypto_invoices_shop_amount_idx), the same
-- indexes this measurement asked for: without the first, every deposits page
-- read all deposits of every shop (712 ms → under 0.1 ms on the loaded shop).

-- The amount filter ("from … to …" in the table's currency). Newest-first order
-- comes from the (shop_id, created_at) indexes; when the range is narrow, walking
-- those in time order reads most of the shop before it finds a page, so the
-- planner takes these instead and sorts the few rows that match.
create index payments_shop_amount_idx on payments (shop_id, amount_kopecks);

-- The event log filtered by delivery status ("failed", "pending"): the status is
-- the delivery's, and the query names the event's shop, not the delivery's, so the
-- status leads: the few failed or pending deliveries are found, then their events.
-- (A filter by "delivered", nearly every row, walks the events newest first.)
create index webhook_deliveries_status_shop_idx on webhook_deliveries (status, shop_id, created_at desc);
