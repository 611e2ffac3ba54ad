-- What each address's completed sweeps moved and when the last one started, read
-- without the rows: custody reconciliation and the sweeper's candidates merge it,
-- in address order, with the final deposits' sums (crypto_deposits_final_address_idx);
-- the sweeper counts an address's failures from its last completed start.
create index crypto_sweeps_completed_address_idx on crypto_sweeps (address) include (amount_micro, created_at) where status = 'completed';
