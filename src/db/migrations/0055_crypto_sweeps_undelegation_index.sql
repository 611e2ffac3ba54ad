-- Addresses whose energy is being taken back are left out of each sweeper pass:
-- without this the check read every sweep attempt ever made.
create index crypto_sweeps_undelegation_pending_idx on crypto_sweeps (address) where undelegation_status = 'pending';
