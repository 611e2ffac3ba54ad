-- What states a deposit (docs/crypto.md "What a credit requires"): `signed_call`
-- when the transaction's own signed calldata (a USDT transfer or transferFrom
-- by its owner) agrees with the Transfer log; `log_only` when only the node's
-- log does (a transfer made inside another contract). Deposits recorded before
-- this were read from logs alone and are left as they are.
alter table crypto_deposits add column evidence text not null default 'signed_call' check (evidence in ('signed_call', 'log_only'));
-- `unconfirmed`: final on chain as far as the reading node says, but no second,
-- independent node confirmed it; never credited, its pending credit voided,
-- held for the operator (not refundable, not in any total).
alter table crypto_deposits drop constraint crypto_deposits_status_check;
alter table crypto_deposits add constraint crypto_deposits_status_check check (status in ('confirming', 'credited', 'held', 'orphaned', 'unconfirmed'));
create index crypto_deposits_unconfirmed_idx on crypto_deposits (chain, block_number) where status = 'unconfirmed';
