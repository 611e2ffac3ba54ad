-- Sandbox money and live money are kept in separate books: every ledger account
-- belongs to one, a transfer never crosses books, and a key sees and moves only
-- the accounts of its shop's mode.
--
-- Before this migration one merchant account held money of both modes, and the
-- gateway's own accounts (settlement, fees) that of every payment. No live
-- acquirer connector has shipped, so existing money is sandbox money: it all
-- goes to the sandbox book. Should a ledger hold transfers of a merchant that has
-- a live shop, they cannot be split by mode automatically, and the migration
-- stops rather than put real money where sandbox keys can move it.
do $$
begin
  if exists (
    select 1
      from ledger_transfers t
      join ledger_accounts a on a.id in (t.debit_account_id, t.credit_account_id)
     where a.merchant_id in (select merchant_id from shops where mode = 'live')
  ) then
    raise exception 'migration 0010_ledger_books: the ledger holds transfers of merchants with a live shop; sandbox and live money cannot be told apart automatically. Split them by hand (docs/ledger.md, "Two books") before upgrading.';
  end if;
end
$$;

alter table ledger_accounts add column book text not null default 'sandbox' check (book in ('sandbox', 'live'));
-- Accounts of merchants whose shops are all live hold no money (checked above): they start the live book.
update ledger_accounts set book = 'live'
  where merchant_id in (select merchant_id from shops group by merchant_id having bool_and(mode = 'live'));
alter table ledger_accounts alter column book drop default;
alter table ledger_accounts drop constraint ledger_accounts_owner_key;
alter table ledger_accounts add constraint ledger_accounts_owner_key unique nulls not distinct (book, merchant_id, currency, kind, shard);
