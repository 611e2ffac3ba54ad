-- Deposit addresses derived ahead of need. Deriving one from the xpub costs
-- about 0.7 ms of CPU (elliptic-curve arithmetic in JavaScript), more than the
-- rest of creating an invoice; so a worker derives them in idle time and keeps
-- this pool topped up, and creating an invoice or a wallet takes one row here
-- (FOR UPDATE SKIP LOCKED) in the same statement that records the address and
-- the invoice. A row taken is deleted; its index is never used again.
-- key_fingerprint names the xpub that derived the row: a pool filled by another
-- key (a changed sandbox seed or live xpub) is never handed out.
create table crypto_address_pool (
  key_id            text not null check (key_id in ('sandbox', 'live')),
  derivation_index  int8 not null check (derivation_index between 0 and 2147483647),
  key_fingerprint   text not null check (length(key_fingerprint) = 16),
  address           text not null check (length(address) = 34),
  primary key (key_id, derivation_index)
);
create index crypto_address_pool_take_idx on crypto_address_pool (key_id, key_fingerprint, derivation_index);
