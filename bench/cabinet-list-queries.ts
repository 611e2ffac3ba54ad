// The queries behind the cabinet's tables, one per filter, as the repositories
// write them (payment-repository listPayments, receiving-repository listInvoices /
// listWallets, payouts-repository listPayouts, ledger-repository listOperations,
// webhook-repository listEvents; newestFirstPage's keyset and withinRange's
// windows of db/list-page.ts), plus the deposits of a shop newest first by
// seen_at, which no repository lists yet. `node bench/cabinet-plans.ts` EXPLAINs them on
// a loaded shop (BENCH_CABINET_DATABASE_URL) to time them; test/db/list-plans.test.ts
// checks the plans of the SQL the routes themselves send, and uses SAMPLE_SQL from here.

export interface ListQuerySample {
  readonly shopId: string;
  readonly merchantId: string;
  /** A row in the middle of each table: a page-2 position and exact searches. */
  readonly paymentId: string;
  readonly paymentCreatedAt: Date;
  readonly orderId: string;
  readonly invoiceExternalId: string;
  readonly invoiceAddress: string;
  readonly walletClientId: string;
  readonly depositTxHash: string;
  readonly depositAddress: string;
  readonly depositSeenAt: Date;
  readonly depositId: string;
  readonly operationSeq: string;
  /** A 30-day window in the middle of the history. */
  readonly from: Date;
  readonly to: Date;
}

export interface ListQuery {
  readonly name: string;
  /** The table whose Seq Scan would mean a whole-table read. */
  readonly table: string;
  readonly sql: string;
  readonly params: readonly unknown[];
}

const LIMIT = 51;

/** The SQL of a list ordered newest first by (`at`, id), as newestFirstPage writes it. */
function newestFirst(table: string, where: string, at = 'created_at', afterParams?: [number, number]): string {
  const after = afterParams
    ? ` and ${at} <= $${afterParams[0]} and (${at} < $${afterParams[0]} or (${at} = $${afterParams[0]} and id < $${afterParams[1]}))`
    : '';
  return `select * from ${table} where ${where}${after} order by ${at} desc, id desc limit ${LIMIT}`;
}

/** listOperations: each account of the book newest first by (created_at, seq), `entries` narrowing its entries. */
function listOperationsSql(entries: string): string {
  return `select o.seq, o.id, o.account_id, o.transfer_id, o.amount, o.balance_after, o.created_at, a.currency, t.type,
                 t.reference_type, t.reference_id, t.status as origin_status, r.status as resolution_status, t.amount as origin_amount
            from ledger_accounts as a
            inner join lateral (
              select o.seq, o.id, o.account_id, o.transfer_id, o.origin_id, o.amount, o.balance_after, o.created_at
                from ledger_operations as o
               where o.account_id = a.id
                 and (o.amount <> 0 or (select closing.id from ledger_transfers as closing where closing.pending_id = o.origin_id) is null)${entries}
               order by o.created_at desc, o.seq desc limit ${LIMIT}) as o on true
            inner join ledger_transfers as t on t.id = o.origin_id
            left join ledger_transfers as r on r.pending_id = t.id
           where a.merchant_id = $1 and a.book = 'sandbox'
           order by o.created_at desc, o.seq desc limit ${LIMIT}`;
}

/** The cursor of listOperations: after the entry it names, that entry's time read among the merchant's. */
const OPERATIONS_AFTER = ` and (o.created_at, o.seq) < ((select c.created_at from ledger_operations c
  join ledger_accounts ca on ca.id = c.account_id where c.seq = $2 and ca.merchant_id = $1 and ca.book = 'sandbox'), $2::int8)`;

function listEventsSql(extra: string): string {
  return `select e.id, e.type, e.created_at, e.payload, e.destination_url, d.id as delivery_id, d.status, d.attempt_count,
                 d.next_attempt_at, d.last_attempt_at
            from webhook_events as e left join webhook_deliveries as d on d.event_id = e.id
           where e.shop_id = $1${extra}
           order by e.created_at desc, e.id desc limit ${LIMIT}`;
}

export function cabinetListQueries(s: ListQuerySample): ListQuery[] {
  const shop = s.shopId;
  const q = (name: string, table: string, sql: string, params: readonly unknown[]): ListQuery => ({
    name,
    table,
    sql,
    params,
  });
  return [
    q('payments', 'payments', newestFirst('payments', 'shop_id = $1'), [shop]),
    q('payments page 2', 'payments', newestFirst('payments', 'shop_id = $1', 'created_at', [2, 3]), [
      shop,
      s.paymentCreatedAt,
      s.paymentId,
    ]),
    q('payments status', 'payments', newestFirst('payments', 'shop_id = $1 and status = $2'), [shop, 'failed']),
    q('payments days', 'payments', newestFirst('payments', 'shop_id = $1 and created_at >= $2 and created_at < $3'), [
      shop,
      s.from,
      s.to,
    ]),
    q(
      'payments status + days',
      'payments',
      newestFirst('payments', 'shop_id = $1 and status = $2 and created_at >= $3 and created_at < $4'),
      [shop, 'failed', s.from, s.to],
    ),
    q(
      'payments amount',
      'payments',
      newestFirst('payments', 'shop_id = $1 and amount_kopecks >= $2 and amount_kopecks <= $3'),
      [shop, 100_000, 120_000],
    ),
    q(
      'payments amount, rare',
      'payments',
      newestFirst('payments', 'shop_id = $1 and amount_kopecks >= $2 and amount_kopecks <= $3'),
      [shop, 100_000, 100_050],
    ),
    q('payments order_id', 'payments', newestFirst('payments', 'shop_id = $1 and order_id = $2'), [shop, s.orderId]),
    q('payments id', 'payments', newestFirst('payments', 'shop_id = $1 and id = $2'), [shop, s.paymentId]),

    q('invoices', 'crypto_invoices', newestFirst('crypto_invoices', 'shop_id = $1'), [shop]),
    q('invoices status', 'crypto_invoices', newestFirst('crypto_invoices', 'shop_id = $1 and status = $2'), [
      shop,
      'underpaid',
    ]),
    q(
      'invoices days',
      'crypto_invoices',
      newestFirst('crypto_invoices', 'shop_id = $1 and created_at >= $2 and created_at < $3'),
      [shop, s.from, s.to],
    ),
    q(
      'invoices amount, rare',
      'crypto_invoices',
      newestFirst('crypto_invoices', 'shop_id = $1 and amount_micro >= $2 and amount_micro <= $3'),
      [shop, 100_000_000, 100_100_000],
    ),
    q('invoices external_id', 'crypto_invoices', newestFirst('crypto_invoices', 'shop_id = $1 and external_id = $2'), [
      shop,
      s.invoiceExternalId,
    ]),
    q('invoices address', 'crypto_invoices', newestFirst('crypto_invoices', 'shop_id = $1 and address = $2'), [
      shop,
      s.invoiceAddress,
    ]),

    q('wallets', 'crypto_wallets', newestFirst('crypto_wallets', 'shop_id = $1'), [shop]),
    q('wallets status', 'crypto_wallets', newestFirst('crypto_wallets', 'shop_id = $1 and status = $2'), [
      shop,
      'blocked',
    ]),
    q('wallets client_id', 'crypto_wallets', newestFirst('crypto_wallets', 'shop_id = $1 and client_id = $2'), [
      shop,
      s.walletClientId,
    ]),

    q('deposits', 'crypto_deposits', newestFirst('crypto_deposits', 'shop_id = $1', 'seen_at'), [shop]),
    q('deposits page 2', 'crypto_deposits', newestFirst('crypto_deposits', 'shop_id = $1', 'seen_at', [2, 3]), [
      shop,
      s.depositSeenAt,
      s.depositId,
    ]),
    q('deposits status', 'crypto_deposits', newestFirst('crypto_deposits', 'shop_id = $1 and status = $2', 'seen_at'), [
      shop,
      'held',
    ]),
    q(
      'deposits days',
      'crypto_deposits',
      newestFirst('crypto_deposits', 'shop_id = $1 and seen_at >= $2 and seen_at < $3', 'seen_at'),
      [shop, s.from, s.to],
    ),
    q(
      'deposits amount, rare',
      'crypto_deposits',
      newestFirst('crypto_deposits', 'shop_id = $1 and amount_micro >= $2 and amount_micro <= $3', 'seen_at'),
      [shop, 100_000_000, 100_100_000],
    ),
    q('deposits tx hash', 'crypto_deposits', newestFirst('crypto_deposits', 'shop_id = $1 and tx_id = $2', 'seen_at'), [
      shop,
      s.depositTxHash,
    ]),
    q(
      'deposits address',
      'crypto_deposits',
      newestFirst('crypto_deposits', 'shop_id = $1 and address = $2', 'seen_at'),
      [shop, s.depositAddress],
    ),

    q('payouts', 'crypto_payouts', newestFirst('crypto_payouts', 'shop_id = $1'), [shop]),
    q('payouts status', 'crypto_payouts', newestFirst('crypto_payouts', 'shop_id = $1 and status = $2'), [
      shop,
      'failed',
    ]),

    q('operations', 'ledger_operations', listOperationsSql(''), [s.merchantId]),
    q('operations page 2', 'ledger_operations', listOperationsSql(OPERATIONS_AFTER), [s.merchantId, s.operationSeq]),
    q('operations days', 'ledger_operations', listOperationsSql(' and o.created_at >= $2 and o.created_at < $3'), [
      s.merchantId,
      s.from,
      s.to,
    ]),
    q('operations type', 'ledger_operations', listOperationsSql(' and o.type = $2'), [s.merchantId, 'payout']),
    q(
      'operations type and days',
      'ledger_operations',
      listOperationsSql(' and o.type = $2 and o.created_at >= $3 and o.created_at < $4'),
      [s.merchantId, 'deposit', s.from, s.to],
    ),

    q('webhook events', 'webhook_events', listEventsSql(''), [shop]),
    q('webhook events status', 'webhook_events', listEventsSql(' and d.status = $2'), [shop, 'failed']),
    q('webhook events type', 'webhook_events', listEventsSql(' and e.type = $2'), [shop, 'crypto.payout.updated']),
    q('webhook events about', 'webhook_events', listEventsSql(' and e.subject_ids @> array[$2]::text[]'), [
      shop,
      s.paymentId,
    ]),
  ];
}

/** The sample of a loaded shop: rows from the middle of each table. */
export const SAMPLE_SQL = `
  with p as (select id, created_at, order_id from payments where shop_id = $1 order by created_at offset (select count(*) / 2 from payments where shop_id = $1) limit 1),
       v as (select external_id, address from crypto_invoices where shop_id = $1 order by created_at offset (select count(*) / 2 from crypto_invoices where shop_id = $1) limit 1),
       w as (select client_id from crypto_wallets where shop_id = $1 order by created_at offset (select count(*) / 2 from crypto_wallets where shop_id = $1) limit 1),
       d as (select id, tx_id, address, seen_at from crypto_deposits where shop_id = $1 order by seen_at offset (select count(*) / 2 from crypto_deposits where shop_id = $1) limit 1),
       o as (select max(seq) / 2 as seq from ledger_operations)
  select p.id::text as payment_id, p.created_at as payment_created_at, p.order_id, v.external_id as invoice_external_id,
         v.address as invoice_address, w.client_id as wallet_client_id, d.id as deposit_id, d.tx_id as deposit_tx_hash,
         d.address as deposit_address, d.seen_at as deposit_seen_at, o.seq::text as operation_seq
    from p, v, w, d, o`;
