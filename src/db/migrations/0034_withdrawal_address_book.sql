-- Cabinet withdrawals, part 2 (issue 27 point 4; docs/refunds-and-withdrawals.md):
-- an address book per merchant and book (sandbox/live) whose entries become
-- usable only after a cool-down; the rule "one person may withdraw up to X"
-- per merchant and book, replacing the per-shop approval switch; who asked and
-- who decided as cabinet user ids (the names stay, for people and the CLI);
-- a note; and a `cancelled` final state.
create table crypto_withdrawal_addresses (
  id                  text primary key,
  merchant_id         text not null references merchants (id),
  chain               text not null check (chain in ('tron-sandbox', 'tron-live')),
  label               text not null check (length(label) between 1 and 100),
  address             text not null check (length(address) = 34),
  added_by            text not null check (length(added_by) between 1 and 320),
  added_by_user_id    text,
  created_at          timestamptz not null,
  -- The address may be named by a withdrawal from this instant (created_at + the cool-down).
  usable_from         timestamptz not null,
  removed_at          timestamptz,
  removed_by          text check (length(removed_by) between 1 and 320),
  check (usable_from >= created_at),
  check ((removed_at is null) = (removed_by is null))
);
-- One live entry per address in a merchant's book; the index decides between concurrent additions.
create unique index crypto_withdrawal_addresses_live_key
  on crypto_withdrawal_addresses (merchant_id, chain, address) where removed_at is null;
create index crypto_withdrawal_addresses_merchant_idx on crypto_withdrawal_addresses (merchant_id, chain, created_at desc, id desc);

-- "A single person may withdraw up to X": absent (or null), every cabinet withdrawal waits for a second person.
create table crypto_withdrawal_rules (
  merchant_id               text not null references merchants (id),
  chain                     text not null check (chain in ('tron-sandbox', 'tron-live')),
  single_person_max_micro   int8 check (single_person_max_micro > 0 and single_person_max_micro <= 1000000000000000),
  updated_at                timestamptz not null,
  primary key (merchant_id, chain)
);

-- The per-shop switch it replaces: a shop set to "no approval" kept its behaviour by a rule without a
-- practical limit (10^9 USDT, the payout maximum) for its merchant's book; "required" is the new default.
insert into crypto_withdrawal_rules (merchant_id, chain, single_person_max_micro, updated_at)
select distinct s.merchant_id, case when s.mode = 'live' then 'tron-live' else 'tron-sandbox' end,
       1000000000000000, now()
  from crypto_withdrawal_settings w join shops s on s.id = w.shop_id
 where not w.approval_required
on conflict do nothing;
drop table crypto_withdrawal_settings;

alter table crypto_withdrawals add column requested_by_user_id text;
alter table crypto_withdrawals add column decided_by_user_id text;
alter table crypto_withdrawals add column address_id text references crypto_withdrawal_addresses (id);
alter table crypto_withdrawals add column note text check (note is null or length(note) <= 500);

alter table crypto_withdrawals drop constraint crypto_withdrawals_status_check;
alter table crypto_withdrawals add constraint crypto_withdrawals_status_check
  check (status in ('awaiting_approval', 'pending', 'processing', 'completed', 'failed', 'rejected', 'cancelled'));
alter table crypto_withdrawals drop constraint crypto_withdrawals_check3;
alter table crypto_withdrawals add constraint crypto_withdrawals_queued_check
  check ((status in ('awaiting_approval', 'rejected', 'cancelled')) = (outgoing_transfer_id is null));
alter table crypto_withdrawals drop constraint crypto_withdrawals_check5;
alter table crypto_withdrawals add constraint crypto_withdrawals_decided_check
  check (status not in ('rejected', 'cancelled') or decided_by is not null);
create index crypto_withdrawals_shop_created_idx on crypto_withdrawals (shop_id, created_at desc, id desc);
