-- An outgoing transfer the worker cannot sign (the live signing key file is not
-- configured, or holds another key than the xpub's) waits like one short of
-- funds and then fails `signer_unavailable`, so its owner's reservation is
-- voided instead of staying reserved for ever (docs/payouts.md "States").
alter table crypto_outgoing_transfers drop constraint crypto_outgoing_transfers_error_code_check;
alter table crypto_outgoing_transfers add constraint crypto_outgoing_transfers_error_code_check check (error_code in (
  'reverted', 'out_of_energy', 'expired', 'insufficient_hot_wallet_funds', 'address_blacklisted', 'invalid_address', 'rejected', 'signer_unavailable'));
