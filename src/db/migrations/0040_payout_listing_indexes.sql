-- The cabinet's payout and batch tables (docs/cabinet.md, "Tables and detail pages"):
-- a status filter reads one shop's payouts (batches) of that state newest first,
-- and the search finds a payout by its recipient address or its transaction hash
-- without reading the shop's whole table (the id and external_id have their keys).
create index crypto_payouts_shop_status_created_idx on crypto_payouts (shop_id, status, created_at desc, id desc);
create index crypto_payouts_shop_recipient_idx on crypto_payouts (shop_id, recipient_address);
create index crypto_payouts_tx_hash_idx on crypto_payouts (tx_hash) where tx_hash is not null;
create index crypto_payout_batches_shop_status_created_idx
  on crypto_payout_batches (shop_id, status, created_at desc, id desc);
-- An amount window (a payout's amount, a batch's total debit) reads the shop's rows in that window, not all of them.
create index crypto_payouts_shop_amount_idx on crypto_payouts (shop_id, amount_micro);
create index crypto_payout_batches_shop_total_idx on crypto_payout_batches (shop_id, total_debit_micro);
