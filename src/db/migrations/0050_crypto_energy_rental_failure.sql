-- Why an energy rental ended without energy (crypto/energy/energy-manager.ts):
-- `provider_failed` when the provider said so (its charge refunded),
-- `not_ordered` when the provider has no such order (the request never reached
-- it), `not_delivered_in_time` when we gave up waiting for a delegation that
-- stayed pending past the bound (its charge is kept as spent: nothing says it
-- was refunded).
alter table crypto_energy_rentals
  add column failure_reason text
    check (failure_reason in ('provider_failed', 'not_ordered', 'not_delivered_in_time')),
  add constraint crypto_energy_rentals_failure_when_failed
    check (failure_reason is null or status = 'failed');
