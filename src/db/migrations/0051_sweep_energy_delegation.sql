-- Sweeps on delegated energy (docs/sweeping.md "Delegated energy"): with
-- `delegate` among PAYGATE_TRON_ENERGY_SOURCES the hot wallet delegates staked
-- energy to a deposit address before its sweep (DelegateResource) and takes it
-- back once the sweep is final (UnDelegateResource). Both are outgoing
-- transfers of the sign-once executor, so a crash never delegates twice nor
-- forgets to take the energy back: asset ENERGY, whose amount is the staked
-- TRX (sun) whose energy is delegated.
alter table crypto_outgoing_transfers drop constraint crypto_outgoing_transfers_purpose_check;
alter table crypto_outgoing_transfers add constraint crypto_outgoing_transfers_purpose_check
  check (purpose in ('payout', 'refund', 'withdrawal', 'sweep', 'gas_topup', 'cold_storage', 'energy_delegation', 'energy_undelegation'));
alter table crypto_outgoing_transfers drop constraint crypto_outgoing_transfers_asset_check;
alter table crypto_outgoing_transfers add constraint crypto_outgoing_transfers_asset_check
  check (asset in ('USDT', 'TRX', 'ENERGY'));
-- The unnamed check of 0019 (asset = 'USDT' or purpose = 'gas_topup') gives way to one that names every pairing.
do $$
declare
  name text;
begin
  select conname into name from pg_constraint
  where conrelid = 'crypto_outgoing_transfers'::regclass and contype = 'c'
    and pg_get_constraintdef(oid) like '%gas_topup%' and conname <> 'crypto_outgoing_transfers_purpose_check';
  execute format('alter table crypto_outgoing_transfers drop constraint %I', name);
end
$$;
alter table crypto_outgoing_transfers add constraint crypto_outgoing_transfers_asset_purpose_check
  check (
    (asset = 'USDT' and purpose not in ('energy_delegation', 'energy_undelegation'))
    or (asset = 'TRX' and purpose = 'gas_topup')
    or (asset = 'ENERGY' and purpose in ('energy_delegation', 'energy_undelegation') and from_kind = 'hot_wallet')
  );

-- delegating: the delegation is queued or on its way (after the activation / bandwidth top-up, if any).
alter table crypto_sweeps drop constraint crypto_sweeps_status_check;
alter table crypto_sweeps add constraint crypto_sweeps_status_check
  check (status in ('topping_up', 'delegating', 'ready', 'sweeping', 'completed', 'failed'));
alter table crypto_sweeps
  -- Staked TRX (sun) whose energy the hot wallet delegates to the address for this attempt; null: the attempt burns.
  add column delegated_sun int8 check (delegated_sun > 0),
  add column delegation_transfer_id text references crypto_outgoing_transfers (id),
  add column delegation_fee_sun int8 check (delegation_fee_sun >= 0),
  -- The last UnDelegateResource sent back; pending until final, failed after its last try (an operator's look).
  add column undelegation_transfer_id text references crypto_outgoing_transfers (id),
  add column undelegation_status text check (undelegation_status in ('pending', 'undelegated', 'failed')),
  add column undelegation_attempts int not null default 0 check (undelegation_attempts >= 0),
  add column undelegation_fee_sun int8 check (undelegation_fee_sun >= 0),
  add constraint crypto_sweeps_delegation_check
    check (delegation_transfer_id is null or delegated_sun is not null),
  add constraint crypto_sweeps_undelegation_check
    check ((undelegation_transfer_id is null) = (undelegation_status is null));
drop index crypto_sweeps_one_in_flight_idx;
create unique index crypto_sweeps_one_in_flight_idx on crypto_sweeps (address)
  where status in ('topping_up', 'delegating', 'ready', 'sweeping');
-- Energy not taken back, for the operator (the sweeper logs them each scan).
create index crypto_sweeps_undelegation_failed_idx on crypto_sweeps (updated_at) where undelegation_status = 'failed';
