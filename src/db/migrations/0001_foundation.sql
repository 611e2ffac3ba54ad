-- Merchants own shops; a shop owns API keys, its mode (sandbox | live) and its webhook settings.
create table merchants (
  id            text primary key,
  name          text not null check (length(name) between 1 and 200),
  email         text not null check (length(email) between 3 and 320),
  password_hash text,
  created_at    timestamptz not null
);
create unique index merchants_email_key on merchants (lower(email));

create table shops (
  id                                  text primary key,
  merchant_id                         text not null references merchants (id),
  name                                text not null check (length(name) between 1 and 200),
  mode                                text not null default 'sandbox' check (mode in ('sandbox', 'live')),
  webhook_url                         text,
  webhook_secret                      text not null,
  previous_webhook_secret             text,
  previous_webhook_secret_expires_at  timestamptz,
  created_at                          timestamptz not null
);
create index shops_merchant_id_idx on shops (merchant_id);

-- Only the SHA-256 of a key is stored; the key itself is shown once at creation.
create table api_keys (
  id          text primary key,
  shop_id     text not null references shops (id),
  key_hash    bytea not null,
  key_prefix  text not null,
  scopes      text[] not null,
  created_at  timestamptz not null,
  revoked_at  timestamptz
);
create unique index api_keys_key_hash_key on api_keys (key_hash);
create index api_keys_shop_id_idx on api_keys (shop_id);
