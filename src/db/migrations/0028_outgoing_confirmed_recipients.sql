-- The executor runs a USDT transfer as a constant call before signing it when
-- nothing was ever confirmed to its recipient on that chain (docs/payouts.md
-- "Recipient checks"): this index answers "which of these recipients has a
-- confirmed transfer" for a whole signing batch in one look-up.
create index crypto_outgoing_transfers_confirmed_recipient_idx on crypto_outgoing_transfers (chain, to_address) where status = 'confirmed';
