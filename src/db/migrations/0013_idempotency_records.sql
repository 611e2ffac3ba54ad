-- One idempotency table for every create operation (the idempotency module):
-- a record names, per shop and operation, the first request made with a key
-- (an Idempotency-Key header or an external_id) by the fingerprint of the
-- request as validated, and what it created. Payments' own table moves here.
create table idempotency_records (
  shop_id          text not null references shops (id),
  -- What the key names, e.g. 'payment.create'; keys of different operations never meet.
  operation        text not null check (length(operation) between 1 and 64),
  key              text not null check (length(key) between 1 and 255),
  -- SHA-256 (hex) of the canonical JSON of the validated, normalized request.
  request_hash     text not null,
  state            text not null check (state in ('in_progress', 'completed')),
  -- Who holds an in-progress record (an operation that calls out before it writes);
  -- completion must present it, and a record whose lease ran out may be taken over.
  lease_token      text not null,
  locked_until     timestamptz not null,
  -- The first response, for operations whose repeat returns it byte for byte.
  response_status  integer,
  response_body    text,
  -- What the request created.
  resource_id      text,
  created_at       timestamptz not null,
  -- When the key becomes new again and the record may be purged; null: never
  -- (external_id keys name their resource for as long as it exists).
  expires_at       timestamptz,
  primary key (shop_id, operation, key),
  check (state = 'in_progress' or resource_id is not null)
);

-- The purge worker walks expired records oldest first.
create index idempotency_records_expires_at_idx on idempotency_records (expires_at) where expires_at is not null;

insert into idempotency_records
  (shop_id, operation, key, request_hash, state, lease_token, locked_until,
   response_status, response_body, resource_id, created_at, expires_at)
select shop_id, 'payment.create', idempotency_key, request_hash, state, lease_token, locked_until,
       response_status, response_body, payment_id::text, created_at, created_at + interval '24 hours'
  from payment_idempotency_keys
 where state = 'completed' or payment_id is not null;

drop table payment_idempotency_keys;
