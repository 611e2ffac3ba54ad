-- Crypto receiving (USDT on TRON): deposit addresses derived from an HD key,
-- invoices, static wallets, the deposits the chain watcher records, and the
-- watcher's cursor per chain. Two chains: 'tron-sandbox' (the simulated chain
-- of sandbox shops, key 'sandbox') and 'tron-live' (the configured nodes, key 'live').

-- The next unused derivation index of each key. An index is taken by an
-- UPDATE … RETURNING that commits on its own, so it is allocated once and
-- never reused (a creation that fails after taking it leaves a gap).
create table crypto_address_counters (
  key_id      text primary key check (key_id in ('sandbox', 'live')),
  next_index  int8 not null check (next_index between 0 and 2147483648)
);
insert into crypto_address_counters (key_id, next_index) values ('sandbox', 0), ('live', 0);

-- Every address we derived. The chain watcher looks up each Transfer's
-- recipient here by primary key: millions of rows, never scanned.
create table crypto_addresses (
  address           text primary key check (length(address) = 34),
  key_id            text not null check (key_id in ('sandbox', 'live')),
  derivation_index  int8 not null check (derivation_index between 0 and 2147483647),
  shop_id           text not null references shops (id),
  purpose           text not null check (purpose in ('invoice', 'wallet')),
  created_at        timestamptz not null,
  unique (key_id, derivation_index)
);
create index crypto_addresses_shop_idx on crypto_addresses (shop_id, created_at);

-- Per-shop crypto settings; a missing row means the defaults.
create table crypto_shop_settings (
  shop_id                  text primary key references shops (id),
  -- The shortfall an invoice may have and still be paid, in basis points (0..5 %).
  underpaid_tolerance_bps  int not null default 0 check (underpaid_tolerance_bps between 0 and 500),
  updated_at               timestamptz not null
);

create table crypto_invoices (
  id            text primary key,
  shop_id       text not null references shops (id),
  external_id   text not null check (length(external_id) between 1 and 100),
  network       text not null check (network = 'TRC20'),
  amount_micro  int8 not null check (amount_micro > 0 and amount_micro <= 1000000000000000),
  -- The sum of its final deposits (late ones included).
  paid_micro    int8 not null default 0 check (paid_micro >= 0),
  address       text not null unique references crypto_addresses (address),
  status        text not null check (status in ('pending', 'confirming', 'paid', 'overpaid', 'underpaid', 'expired')),
  lifetime_s    int not null check (lifetime_s between 300 and 43200),
  callback_url  text check (length(callback_url) <= 2048),
  expires_at    timestamptz not null,
  paid_at       timestamptz,
  created_at    timestamptz not null,
  updated_at    timestamptz not null,
  unique (shop_id, external_id)
);
create index crypto_invoices_shop_created_idx on crypto_invoices (shop_id, created_at desc, id desc);
-- The expiry pass's queue: only invoices still waiting for money.
create index crypto_invoices_open_expiry_idx on crypto_invoices (expires_at) where status in ('pending', 'confirming');

create table crypto_wallets (
  id          text primary key,
  shop_id     text not null references shops (id),
  client_id   text not null check (length(client_id) between 1 and 100),
  network     text not null check (network = 'TRC20'),
  address     text not null unique references crypto_addresses (address),
  status      text not null check (status in ('active', 'blocked')),
  created_at  timestamptz not null,
  updated_at  timestamptz not null,
  unique (shop_id, client_id, network)
);
create index crypto_wallets_shop_created_idx on crypto_wallets (shop_id, created_at desc, id desc);

-- A USDT Transfer to one of our addresses, recorded once by (tx_id, log_index).
-- confirming: seen, its block not final yet; credited: final and credited to the
-- merchant; held: final, to a blocked wallet, not credited; orphaned: its block
-- left the chain (it returns to confirming if it reappears in another block).
create table crypto_deposits (
  id             text primary key,
  chain          text not null check (chain in ('tron-sandbox', 'tron-live')),
  shop_id        text not null references shops (id),
  address        text not null references crypto_addresses (address),
  invoice_id     text references crypto_invoices (id),
  wallet_id      text references crypto_wallets (id),
  tx_id          text not null check (tx_id ~ '^[0-9a-f]{64}$'),
  log_index      int not null check (log_index >= 0),
  block_number   int8 not null check (block_number >= 0),
  block_id       text not null check (block_id ~ '^[0-9a-f]{64}$'),
  from_address   text not null check (length(from_address) = 34),
  amount_micro   int8 not null check (amount_micro > 0),
  status         text not null check (status in ('confirming', 'credited', 'held', 'orphaned')),
  -- Seen after its invoice's expires_at: credited all the same, and reported as late.
  late           boolean not null default false,
  seen_at        timestamptz not null,
  final_at       timestamptz,
  unique (tx_id, log_index),
  check ((invoice_id is null) <> (wallet_id is null)),
  check ((status in ('credited', 'held')) = (final_at is not null))
);
-- The finality pass's queue: deposits waiting for their block to solidify.
create index crypto_deposits_confirming_idx on crypto_deposits (chain, block_number) where status = 'confirming';
create index crypto_deposits_invoice_idx on crypto_deposits (invoice_id, seen_at) where invoice_id is not null;
create index crypto_deposits_wallet_idx on crypto_deposits (wallet_id, seen_at) where wallet_id is not null;

-- Where the watcher of each chain is: the last block it recorded (advanced in
-- the transaction that recorded that block's deposits), and its leader's lease
-- (one watcher scans at a time; another takes over when the lease runs out).
create table crypto_chain_cursors (
  chain         text primary key check (chain in ('tron-sandbox', 'tron-live')),
  block_number  int8 not null check (block_number >= 0),
  block_id      text not null check (block_id ~ '^[0-9a-f]{64}$'),
  leader_token  text,
  lease_until   timestamptz,
  updated_at    timestamptz not null
);

-- The ids of the blocks the watcher recorded, recent ones only: a reorganisation
-- is walked back by comparing them with the node's chain.
create table crypto_scanned_blocks (
  chain         text not null check (chain in ('tron-sandbox', 'tron-live')),
  block_number  int8 not null check (block_number >= 0),
  block_id      text not null check (block_id ~ '^[0-9a-f]{64}$'),
  primary key (chain, block_number)
);
