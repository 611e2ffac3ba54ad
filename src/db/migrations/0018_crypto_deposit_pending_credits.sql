-- A deposit is a pending ledger credit while it confirms (hot_wallet → merchant
-- USDT main, posted when final, voided when orphaned or held). credit_round
-- numbers the deposit's current pending credit: its ledger id is
-- `crypto-deposit:<id>:<credit_round>`, and an orphaned deposit seen again
-- gets the next round, so every reservation id stays unique. 0 marks a
-- deposit recorded before this migration, which has no pending credit: it is
-- credited by a plain transfer when final, as before.
alter table crypto_deposits add column credit_round int4 not null default 0 check (credit_round >= 0);
