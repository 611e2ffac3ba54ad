-- The gateway's own accounts (settlement, fees, …) are split into shards: every
-- paid payment credited the same two rows, so all payments of all merchants
-- queued on those two row locks. A payment now uses the shard its id hashes to;
-- a system account's balance is the sum over its shards. Merchant accounts
-- have a single shard 0.
alter table ledger_accounts add column shard int2 not null default 0 check (shard between 0 and 255);
alter table ledger_accounts drop constraint ledger_accounts_owner_key;
alter table ledger_accounts add constraint ledger_accounts_owner_key unique nulls not distinct (merchant_id, currency, kind, shard);
alter table ledger_accounts add constraint ledger_accounts_merchant_unsharded check (merchant_id is null or shard = 0);
