-- A queued transfer the signing key cannot sign (the key does not derive its
-- sending address: a restored database, a rotated key, an address no key
-- controls) is held unsigned, alone, while the rest of its pass is signed
-- (docs/payouts.md "A transfer the key cannot sign"). unsignable_checked_at is
-- the last pass that found it so: passes skip it until the recheck interval has
-- passed, so it is never tried again every pass; signing it clears it.
alter table crypto_outgoing_transfers
  add column unsignable_checked_at timestamptz;
