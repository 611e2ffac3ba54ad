-- What each address's completed sweeps moved, read without the rows: custody
-- reconciliation merges it, in address order, with the final deposits' sums
-- (crypto_deposits_final_address_idx), and the sweeper sums it per candidate.
create index crypto_sweeps_completed_address_idx on crypto_sweeps (address) include (amount_micro) where status = 'completed';
