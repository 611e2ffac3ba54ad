-- The objects an event is about, so an object's page can show the webhooks it
-- caused: the ids its data names (payment_id, invoice_id, refund_id, payout_id,
-- batch_id, withdrawal_id, deposit_id, wallet_id, at the top level and in the
-- wallet and deposit it carries). The outbox fills it as it writes the event;
-- events written before are not found by it. Looked up with the GIN index, then
-- narrowed to the shop.
alter table webhook_events add column subject_ids text[] not null default '{}';

create index webhook_events_subject_idx on webhook_events using gin (subject_ids);
