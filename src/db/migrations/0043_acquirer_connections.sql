-- Live acquiring (docs/connectors.md): each live shop stores its own connections
-- to production acquirers, and an attempt remembers what the acquirer said of its
-- charge (its id, and what the payer must do there).
create table acquirer_connections (
  id                 text primary key,
  shop_id            text not null references shops (id),
  provider           text not null check (length(provider) between 1 and 40),
  api_url            text not null check (length(api_url) between 1 and 2048),
  -- The provider's credentials as JSON, sealed by src/kms with the connection id as context.
  credentials_sealed text not null,
  methods            text[] not null check (cardinality(methods) > 0 and methods <@ array['card', 'sbp', 'sberpay']),
  -- Routing: a method goes to the shop's connection with the lowest priority that has it (then the oldest).
  priority           integer not null default 0 check (priority between 0 and 1000),
  created_at         timestamptz not null,
  updated_at         timestamptz not null,
  -- A removed connection routes nothing new; its attempts' look-ups and refunds still use it.
  removed_at         timestamptz
);
create index acquirer_connections_shop_idx on acquirer_connections (shop_id, priority, created_at) where removed_at is null;

-- requires_action: the payer is at the acquirer (its page, or a QR in the bank app).
alter table payment_attempts drop constraint payment_attempts_status_check;
alter table payment_attempts add constraint payment_attempts_status_check
  check (status in ('pending', 'requires_confirmation', 'requires_action', 'succeeded', 'declined', 'abandoned'));
-- A live connector is named `<provider>:<connection id>`.
alter table payment_attempts drop constraint payment_attempts_connector_check;
alter table payment_attempts add constraint payment_attempts_connector_check check (length(connector) between 1 and 80);
alter table payment_attempts add column provider_reference text check (length(provider_reference) between 1 and 200);
-- The payer's action: a redirect URL, or a QR payload with an optional deep link for phones.
alter table payment_attempts add column payer_action_kind text check (payer_action_kind in ('redirect', 'qr'));
alter table payment_attempts add column payer_action_url text check (length(payer_action_url) <= 4096);
alter table payment_attempts add column payer_action_qr text check (length(payer_action_qr) <= 4096);
alter table payment_attempts add column payer_action_deep_link text check (length(payer_action_deep_link) <= 4096);
alter table payment_attempts add constraint payment_attempts_payer_action check (
  (payer_action_kind is null and payer_action_url is null and payer_action_qr is null and payer_action_deep_link is null)
  or (payer_action_kind = 'redirect' and payer_action_url is not null and payer_action_qr is null)
  or (payer_action_kind = 'qr' and payer_action_qr is not null and payer_action_url is null)
);
-- A notification may name the charge only by the acquirer's id.
create index payment_attempts_provider_reference_idx on payment_attempts (connector, provider_reference)
  where provider_reference is not null;
-- The reconciliation queue now holds attempts waiting for the payer at the acquirer too.
drop index payment_attempts_unresolved_idx;
create index payment_attempts_unresolved_idx on payment_attempts (next_check_at)
  where status in ('pending', 'requires_confirmation', 'requires_action');
-- An attempt waiting for the payer at the acquirer holds expiry off like a pending one, so its end wakes the expiry worker too.
drop trigger payment_attempts_resolved_notify on payment_attempts;
create trigger payment_attempts_resolved_notify
  after update of status on payment_attempts
  for each row
  when (old.status in ('pending', 'requires_confirmation', 'requires_action')
        and new.status not in ('pending', 'requires_confirmation', 'requires_action'))
  execute function notify_payment_expiry_unblocked();
