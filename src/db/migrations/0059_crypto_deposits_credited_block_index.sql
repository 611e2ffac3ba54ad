-- Custody reconciliation subtracts the deposits credited from blocks above the
-- solidified block its balances were read at: a handful of the newest deposits,
-- which without an index of their own were found by reading every deposit of the
-- year (2.6 s on a million, during a payout drain). Credited deposits never leave
-- that status, and crediting one already changes indexed columns (not a HOT update),
-- so the index costs one entry per deposit.
create index crypto_deposits_credited_block_idx on crypto_deposits (chain, block_number) include (amount_micro)
  where status = 'credited';
