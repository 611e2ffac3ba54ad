-- The sweeper's candidates merge, in address order, the final deposits' sums with
-- the completed sweeps' sums and last start (failures count from it), read from
-- this index alone; 0053's held the amount only, so each address's rows were read.
drop index crypto_sweeps_completed_address_idx;
create index crypto_sweeps_completed_address_idx on crypto_sweeps (address) include (amount_micro, created_at) where status = 'completed';
-- Addresses whose energy is being taken back are left out of each pass: without
-- this the check read every attempt ever made.
create index crypto_sweeps_undelegation_pending_idx on crypto_sweeps (address) where undelegation_status = 'pending';
