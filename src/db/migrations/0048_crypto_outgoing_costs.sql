-- What each outgoing transfer cost on chain, read from its receipt when it
-- becomes final (docs/payouts.md "Costs"): energy used and the part of it the
-- sender's own resources covered (staked, delegated or rented energy), the TRX
-- burned for energy and for bandwidth, where the energy came from, and the
-- cost in micro-USDT at PAYGATE_TRX_USDT_RATE (burned TRX plus any rental).
-- energy_plan and rental_sun are set when the transfer is signed: the source
-- the energy manager arranged and what renting it cost. above_burn_cap_since
-- marks a transfer held unsigned because it would burn more TRX than
-- PAYGATE_TRON_MAX_BURN_TRX allows (it waits; it never fails for that).
alter table crypto_outgoing_transfers
  add column energy_used         int8 check (energy_used >= 0),
  add column energy_own          int8 check (energy_own >= 0),
  add column energy_fee_sun      int8 check (energy_fee_sun >= 0),
  add column bandwidth_used      int8 check (bandwidth_used >= 0),
  add column bandwidth_fee_sun   int8 check (bandwidth_fee_sun >= 0),
  add column energy_source       text check (energy_source in ('staked', 'delegated', 'rented', 'burned', 'mixed')),
  add column energy_plan         text check (energy_plan in ('staked', 'delegated', 'rented', 'burned')),
  add column rental_sun          int8 check (rental_sun >= 0),
  add column cost_micro          int8 check (cost_micro >= 0),
  add column above_burn_cap_since timestamptz;

-- The per-day sums (/metrics, `paygate crypto costs`) read final transfers by day.
create index crypto_outgoing_transfers_final_day_idx on crypto_outgoing_transfers (final_at, chain) where final_at is not null;
