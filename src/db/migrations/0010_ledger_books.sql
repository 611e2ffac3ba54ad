-- Sandbox money and live money are kept in separate books: every ledger account
-- belongs to one, a transfer never crosses books, and a key sees and moves only
-- the accounts of its shop's mode. Existing merchant accounts go to the live book
-- only when every shop of their merchant is live; everything else (sandbox is the
-- default of new shops) goes to the sandbox book, so no sandbox money can surface
-- in a live balance.
alter table ledger_accounts add column book text not null default 'sandbox' check (book in ('sandbox', 'live'));
update ledger_accounts set book = 'live'
  where merchant_id in (select merchant_id from shops group by merchant_id having bool_and(mode = 'live'));
alter table ledger_accounts alter column book drop default;
alter table ledger_accounts drop constraint ledger_accounts_owner_key;
alter table ledger_accounts add constraint ledger_accounts_owner_key unique nulls not distinct (book, merchant_id, currency, kind, shard);
