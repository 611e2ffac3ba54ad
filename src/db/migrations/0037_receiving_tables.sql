-- The cabinet's tables of crypto receiving (invoices, static wallets, deposits,
-- refunds): each filter and search of a shop's table can use an index.
-- A shop's deposits newest seen first (the deposits table's keyset order).
create index crypto_deposits_shop_seen_idx on crypto_deposits (shop_id, seen_at desc, id desc);
-- A deposit found by its address (the search box).
create index crypto_deposits_address_idx on crypto_deposits (address, seen_at desc);
-- A refund found by its recipient address or its transaction.
create index crypto_refunds_recipient_idx on crypto_refunds (recipient_address);
create index crypto_refunds_tx_hash_idx on crypto_refunds (tx_hash) where tx_hash is not null;
-- An invoice's refunds, and every refund of a deposit (released ones too), for their detail pages.
create index crypto_refunds_invoice_idx on crypto_refunds (invoice_id) where invoice_id is not null;
create index crypto_refund_deposits_deposit_idx on crypto_refund_deposits (deposit_id);
-- A status filter walks only that status's rows of the shop, newest first.
create index crypto_invoices_shop_status_idx on crypto_invoices (shop_id, status, created_at desc, id desc);
create index crypto_wallets_shop_status_idx on crypto_wallets (shop_id, status, created_at desc, id desc);
create index crypto_deposits_shop_status_idx on crypto_deposits (shop_id, status, seen_at desc, id desc);
create index crypto_refunds_shop_status_idx on crypto_refunds (shop_id, status, created_at desc, id desc);
-- An amount range reads only the rows inside it (then sorted newest first).
create index crypto_invoices_shop_amount_idx on crypto_invoices (shop_id, amount_micro);
create index crypto_deposits_shop_amount_idx on crypto_deposits (shop_id, amount_micro);
