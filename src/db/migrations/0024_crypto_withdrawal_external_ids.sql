-- Cabinet withdrawals are idempotent by external_id, per shop, as every other
-- money-out operation is (a form submitted twice, a retry after a timeout: the
-- same withdrawal, never a second one). The idempotency module's record
-- (operation cabinet.withdrawal.create) decides between requests; the column
-- shows the key on the withdrawal and the unique index backs the record.
-- Withdrawals made before this migration have none.
alter table crypto_withdrawals add column external_id text check (external_id is null or length(external_id) between 1 and 100);
create unique index crypto_withdrawals_shop_external_id_key on crypto_withdrawals (shop_id, external_id) where external_id is not null;
