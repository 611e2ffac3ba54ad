-- Energy rented from a provider for one outgoing transfer (crypto/energy/,
-- docs/payouts.md "Energy"): ordered when the transfer's sender lacks energy and
-- renting it costs less than burning TRX for it; the transfer waits, unsigned,
-- until the provider has delegated the energy on chain (or the order failed).
create table crypto_energy_rentals (
  id             text primary key,
  chain          text not null check (chain in ('tron-sandbox', 'tron-live')),
  transfer_id    text not null check (length(transfer_id) between 1 and 100),
  address        text not null check (length(address) = 34),
  provider       text not null check (length(provider) between 1 and 50),
  order_id       text check (length(order_id) between 1 and 200),
  energy         int8 not null check (energy > 0),
  price_sun      int8 not null check (price_sun >= 0),
  status         text not null check (status in ('pending', 'delivered', 'failed')),
  created_at     timestamptz not null,
  updated_at     timestamptz not null
);
create index crypto_energy_rentals_transfer_idx on crypto_energy_rentals (transfer_id, created_at);
