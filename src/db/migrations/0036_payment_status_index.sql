-- The cabinet's payments table filtered by status, newest first: without this
-- index a rare status (failed) walks the shop's whole newest-first index to fill
-- a page.
create index payments_shop_status_created_idx on payments (shop_id, status, created_at desc, id desc);
