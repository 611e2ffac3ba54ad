-- Deposits below a shop's minimum are dust (address-poisoning spam, mostly):
-- recorded here, never in crypto_deposits, so they change no invoice, send no
-- webhook and credit nothing; the custody view counts them on their address
-- (docs/crypto.md "Dust").
alter table crypto_shop_settings
  add column min_deposit_micro int8 not null default 10000 check (min_deposit_micro between 1 and 100000000);

create table crypto_ignored_deposits (
  tx_id          text not null check (tx_id ~ '^[0-9a-f]{64}$'),
  log_index      int not null check (log_index >= 0),
  chain          text not null check (chain in ('tron-sandbox', 'tron-live')),
  shop_id        text not null references shops (id),
  address        text not null references crypto_addresses (address),
  block_number   int8 not null check (block_number >= 0),
  block_id       text not null check (block_id ~ '^[0-9a-f]{64}$'),
  from_address   text not null check (length(from_address) = 34),
  amount_micro   int8 not null check (amount_micro > 0),
  -- The minimum the transfer was below when it was seen.
  minimum_micro  int8 not null check (minimum_micro > amount_micro),
  seen_at        timestamptz not null,
  primary key (tx_id, log_index)
);
create index crypto_ignored_deposits_address_idx on crypto_ignored_deposits (address) include (amount_micro);
-- A reorganisation forgets the dust of the blocks it took away.
create index crypto_ignored_deposits_block_idx on crypto_ignored_deposits (chain, block_number);
