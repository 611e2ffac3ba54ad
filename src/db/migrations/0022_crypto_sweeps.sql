-- Sweeping (docs/sweeping.md): moving the USDT that sits on our deposit
-- addresses to the hot wallet. One row per attempt on an address. An attempt
-- first tops the address up with exactly the TRX its USDT transfer will burn
-- (a `gas_topup` outgoing transfer from the hot wallet), then sends the USDT
-- (a `sweep` outgoing transfer signed with the deposit key); both go through
-- the sign-once executor (src/crypto/sending/), whose transfer ids are kept here.
--
-- topping_up: the top-up is queued or on its way; ready: the top-up is final,
-- the USDT transfer is to be built from the balance the chain reports then;
-- sweeping: the USDT transfer is queued or on its way; completed / failed: final.
create table crypto_sweeps (
  id                   text primary key,
  chain                text not null check (chain in ('tron-sandbox', 'tron-live')),
  address              text not null references crypto_addresses (address),
  status               text not null check (status in ('topping_up', 'ready', 'sweeping', 'completed', 'failed')),
  -- Final (credited or held) deposits on the address not yet swept when the attempt began.
  unswept_final_micro  int8 not null check (unswept_final_micro >= 0),
  -- The chain's estimate of the USDT transfer (transfer-cost.ts) and what the address had.
  energy               int8 not null check (energy >= 0),
  bandwidth            int8 not null check (bandwidth >= 0),
  estimated_fee_sun    int8 not null check (estimated_fee_sun >= 0),
  trx_before_sun       int8 not null check (trx_before_sun >= 0),
  activated_before     boolean not null,
  -- TRX sent by the top-up (0: the address had enough, no top-up).
  topup_sun            int8 not null check (topup_sun >= 0),
  topup_transfer_id    text references crypto_outgoing_transfers (id),
  topup_fee_sun        int8 check (topup_fee_sun >= 0),
  -- USDT the sweep transfer moves: the chain's balance when it was built.
  amount_micro         int8 check (amount_micro > 0),
  sweep_transfer_id    text references crypto_outgoing_transfers (id),
  sweep_fee_sun        int8 check (sweep_fee_sun >= 0),
  tx_hash              text check (tx_hash ~ '^[0-9a-f]{64}$'),
  error_code           text check (length(error_code) <= 64),
  error_message        text check (length(error_message) <= 1000),
  -- A failure an operator cleared (`paygate crypto sweeps retry`): it no longer counts toward stuck.
  cleared              boolean not null default false,
  created_at           timestamptz not null,
  updated_at           timestamptz not null,
  final_at             timestamptz,
  check ((topup_sun = 0) = (topup_transfer_id is null)),
  check ((status in ('sweeping', 'completed')) = (sweep_transfer_id is not null) or status = 'failed'),
  check ((status in ('completed', 'failed')) = (final_at is not null)),
  check ((status = 'failed') = (error_code is not null))
);
-- One sweep per address at a time: a second attempt while one is in flight is a unique violation.
create unique index crypto_sweeps_one_in_flight_idx on crypto_sweeps (address) where status in ('topping_up', 'ready', 'sweeping');
-- The sweeper's queue of attempts whose top-up is final.
create index crypto_sweeps_ready_idx on crypto_sweeps (updated_at) where status = 'ready';
-- An address's attempts, newest first (consecutive failures, the custody view).
create index crypto_sweeps_address_idx on crypto_sweeps (address, created_at desc);
-- The sweeper sums final deposits per address.
create index crypto_deposits_final_address_idx on crypto_deposits (address) include (amount_micro) where status in ('credited', 'held');

-- An attempt whose top-up became final is due at once (the sweeper builds its USDT transfer).
create function notify_sweep_ready() returns trigger
language plpgsql as $$
begin
  perform pg_notify('paygate_work', 'crypto_sweep');
  return null;
end
$$;

create trigger crypto_sweeps_ready_notify
  after insert or update of status on crypto_sweeps
  for each row
  when (new.status = 'ready')
  execute function notify_sweep_ready();
