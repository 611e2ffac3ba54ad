-- The hot wallet's own staked energy reserved for one quoted outgoing transfer
-- (crypto/energy/energy-reservations.ts, docs/payouts.md "The quoted network
-- fee"): a payout quoted without the energy part holds its energy here from its
-- creation until its transfer is final, so no later creation is promised the
-- same energy and the executor signs it on that energy first. Claimed under a
-- per-chain advisory lock before the payout's own statement; a creation that
-- writes nothing deletes its claim, and a claim whose transfer never appeared
-- lapses after a short grace (the creation statement takes milliseconds).
create table crypto_energy_reservations (
  transfer_id  text primary key check (length(transfer_id) between 1 and 100),
  chain        text not null check (chain in ('tron-sandbox', 'tron-live')),
  energy       int8 not null check (energy > 0),
  created_at   timestamptz not null
);
create index crypto_energy_reservations_chain_idx on crypto_energy_reservations (chain, created_at);
