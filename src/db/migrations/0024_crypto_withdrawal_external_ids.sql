-- Cabinet withdrawals are idempotent by external_id, as every other money-out
-- operation is (a form submitted twice, a retry after a timeout: the same
-- withdrawal, never a second one). The key is the merchant's within a book
-- (chain), not a shop's: every shop of the merchant draws on the same balance,
-- so a retry naming another shop of the merchant must find the first request.
-- The unique index decides between concurrent requests. Withdrawals made before
-- this migration have none.
alter table crypto_withdrawals add column external_id text check (external_id is null or length(external_id) between 1 and 100);
create unique index crypto_withdrawals_external_id_key on crypto_withdrawals (merchant_id, chain, external_id) where external_id is not null;
