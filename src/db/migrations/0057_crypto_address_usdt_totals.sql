-- Each deposit address's running USDT totals: its final deposits (credited or
-- held; a final deposit never changes amount or leaves those statuses) and what
-- its completed sweeps moved. Settlement adds to the first and a completed sweep
-- to the second, each in its own transaction, so the addresses that should still
-- hold USDT are the few rows of a partial index: the sweeper's candidates and
-- custody reconciliation read those instead of summing every deposit and sweep
-- of the year.
alter table crypto_addresses
  add column final_usdt_micro int8 not null default 0 check (final_usdt_micro >= 0),
  add column swept_usdt_micro int8 not null default 0 check (swept_usdt_micro >= 0),
  -- A column of its own rather than the difference in each query: the planner keeps
  -- statistics of it, so it knows how few addresses hold USDT.
  add column unswept_usdt_micro int8 generated always as (final_usdt_micro - swept_usdt_micro) stored;

update crypto_addresses a set final_usdt_micro = f.total
  from (select address, sum(amount_micro)::int8 as total from crypto_deposits
         where status in ('credited', 'held') group by address) f
 where f.address = a.address;

update crypto_addresses a set swept_usdt_micro = s.total
  from (select address, sum(amount_micro)::int8 as total from crypto_sweeps
         where status = 'completed' group by address) s
 where s.address = a.address;

create index crypto_addresses_unswept_idx on crypto_addresses (key_id, address)
  include (derivation_index, unswept_usdt_micro)
  where unswept_usdt_micro > 0;
