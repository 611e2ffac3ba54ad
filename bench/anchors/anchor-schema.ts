// The anchor's table: the columns, checks and indexes of the gateway's
// `payments` table (src/db/migrations/0003_payments.sql), without the foreign
// key to shops. Every anchor insert maintains the same six indexes as a
// gateway insert, so the anchor costs what one payment row costs the database.
// Keep it in step with the payments table when that changes.
export const ANCHOR_TABLE_DDL = `
  create table if not exists anchor_payments (
    id                    uuid primary key,
    shop_id               text not null,
    order_code            text not null check (length(order_code) between 6 and 32),
    status                text not null check (status in ('pending', 'paid', 'failed', 'expired')),
    amount_kopecks        int8 not null check (amount_kopecks between 100 and 100000000),
    amount_total_kopecks  int8 not null check (amount_total_kopecks >= amount_kopecks),
    currency              text not null check (currency = 'RUB'),
    method                text check (method in ('card', 'sbp', 'sberpay')),
    order_id              text check (length(order_id) <= 255),
    callback_url          text check (length(callback_url) <= 2048),
    created_at            timestamptz not null,
    expires_at            timestamptz not null,
    paid_at               timestamptz,
    paid_method           text check (paid_method in ('card', 'sbp', 'sberpay')),
    paid_total_kopecks    int8,
    failed_at             timestamptz,
    failure_reason        text,
    expired_at            timestamptz,
    check ((status = 'paid') = (paid_at is not null))
  );
  create unique index if not exists anchor_payments_order_code_key on anchor_payments (order_code);
  create index if not exists anchor_payments_shop_created_idx on anchor_payments (shop_id, created_at desc, id desc);
  create index if not exists anchor_payments_shop_order_id_idx on anchor_payments (shop_id, order_id, created_at desc, id desc);
  create index if not exists anchor_payments_pending_expiry_idx on anchor_payments (expires_at) where status = 'pending';
  create index if not exists anchor_payments_shop_amount_idx on anchor_payments (shop_id, amount_kopecks);
`;

/** One INSERT … RETURNING: the whole of the anchor's POST. Amount in kopecks is computed by the database from the JSON number. */
export const ANCHOR_INSERT = `
  insert into anchor_payments (id, shop_id, order_code, status, amount_kopecks, amount_total_kopecks, currency, method,
    order_id, callback_url, created_at, expires_at)
  values ($1, 'shop_anchor', $2, 'pending', round($3::numeric * 100)::int8, round($3::numeric * 100)::int8, $4, $5, $6, $7,
    now(), now() + interval '1 hour')
  returning id, order_code, status, amount_kopecks::text as amount_kopecks, currency, method, order_id, callback_url, created_at, expires_at`;

/** One SELECT by primary key: the whole of the anchor's GET. */
export const ANCHOR_SELECT = `
  select id, order_code, status, amount_kopecks::text as amount_kopecks, currency, method, order_id, callback_url, created_at, expires_at
  from anchor_payments where id = $1`;
