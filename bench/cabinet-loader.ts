// The data of bench:cabinet: one merchant's sandbox shop with a year of history
// (1,000,000 payments, 1,000,000 USDT deposits by default) written by SQL
// `generate_series` straight into the gateway's tables, in minutes. Every row is
// one the gateway itself could have written, and the ledger adds up: each paid
// payment is a posted transfer settlement → the merchant's RUB main account
// (payment-credit.ts), each credited deposit a posted transfer hot wallet → the
// merchant's USDT main account (deposit-credits.ts, round 0), each payout a
// reservation of its amount from the USDT main account posted (completed) or
// voided (failed) (payout-ledger.ts, no fees); the history (ledger_operations)
// has one entry per account whose available balance a transfer changed, in time
// order, with balance_after the running sum, and the accounts' totals are those
// their transfers add up to. `checkLedgerInvariants` is run after the load.
//
// Ids: payments are md5-derived UUIDs; every other row gets its TypeID prefix
// and 26 characters of [0-9a-z] (digits of a row number, or md5 hex), which the
// gateway's id checks accept. Addresses are valid Base58Check TRON addresses
// made from the row's kind and number (bench/loader-addresses.ts: the custody
// check reads their balances like any deposit address's). Nothing here is due: no pending
// payment has expired, every invoice is final, every deposit final, every
// delivery done, so workers have nothing to catch up on.
import type pg from 'pg';
import { CREATE_ADDRESS_FUNCTION, DROP_ADDRESS_FUNCTION, loaderAddress } from './loader-addresses.ts';

export interface CabinetLoad {
  readonly merchantId: string;
  readonly shopId: string;
  readonly payments: number;
  readonly deposits: number;
  /** Of the deposits, this many go to static wallets (10 per wallet); the rest pay one invoice each. */
  readonly walletDeposits: number;
  /** Invoices that expired unpaid (no deposit), beside those the deposits paid. */
  readonly expiredInvoices: number;
  readonly payouts: number;
  /** Payouts in batches of 100 (the rest are single). */
  readonly batchedPayouts: number;
  /** Webhook events, each delivered once: one per final payment, invoice, wallet deposit and payout. */
  readonly events: boolean;
  /**
   * Where this shop's rows sit among other shops loaded into the same database (bench:growth): its
   * number (0 for the first, whose ids are the single-shop ones) and how many invoice and wallet
   * addresses the shops before it derived.
   */
  readonly place?: { readonly serial: number; readonly invoicesBefore: number; readonly walletsBefore: number };
}

const YEAR_S = 365 * 86_400;
const SHARDS = 16;
/** Row numbers of shop `serial` start at serial × 10^12, so that two shops' numbered ids never meet. */
const SERIAL_STRIDE = 1_000_000_000_000;
/** The suffix of a TypeID from a text: 26 hex digits of its md5. */
const hashed = (expression: string) => `substr(md5(${expression}), 1, 26)`;
/** The shard a system account is chosen by for `id` (ledger-accounts.ts shardOf: sha256, first two bytes, mod 16). */
const shardOf = (expression: string) =>
  `((get_byte(sha256(convert_to(${expression}, 'UTF8')), 0) * 256 + get_byte(sha256(convert_to(${expression}, 'UTF8')), 1)) % ${SHARDS})`;
/** A 64-hex-digit hash (tx ids). */
const hex64 = (expression: string) => `md5('a' || ${expression}) || md5('b' || ${expression})`;
/**
 * How long ago the newest row of every series was created: two hours, so that what follows a row's
 * creation in its history (an invoice or payment expires an hour later, a payout completes two
 * minutes later) is in the past when the benchmark starts.
 */
const NEWEST_AGE_S = 7_200;
/**
 * The chain's blocks the history sits in: every loaded transfer is in blocks 1..HISTORY_BLOCKS, in
 * time order, so a simulated chain mined past HISTORY_BLOCKS + its solidity depth has every loaded
 * deposit, sweep and payout at or below its solidified block, as a running gateway's are.
 */
export const HISTORY_BLOCKS = 1_000;
/** The block of the history that a transfer at `at` (a timestamptz expression) is in. */
export const historyBlock = (now: string, at: string) =>
  `greatest(1, least(${HISTORY_BLOCKS}, ceil(${HISTORY_BLOCKS} * (1 - extract(epoch from (${now} - (${at}))) / ${YEAR_S + NEWEST_AGE_S}))))::int8`;
/** The id of history block `block` (an int8 expression): its number in the first 16 hex digits, as TRON's. */
const historyBlockId = (block: string) =>
  `lpad(to_hex(${block}), 16, '0') || substr(${hex64(`'block' || ${block}`)}, 1, 48)`;
/** A pseudo-random 0..999 of row `i` and a salt: statuses and amounts spread without random(). */
const spread = (i: string, salt: number) => `(((${i})::int8 * 2654435761 + ${salt * 40503}) % 1000003 % 1000)`;

/**
 * One shop's own rows: payments, addresses, invoices, wallets, deposits, payouts. What follows from
 * them (ledger transfers, webhook events) is `derivedStatements`, the ledger's history and account
 * totals `ledgerHistoryStatements`: each once over every shop loaded.
 */
export function shopRowStatements(load: CabinetLoad, nowIso: string): Array<{ label: string; sql: string }> {
  const place = load.place ?? { serial: 0, invoicesBefore: 0, walletsBefore: 0 };
  const rowNumber = (expression: string) =>
    place.serial === 0 ? expression : `${place.serial * SERIAL_STRIDE}::int8 + (${expression})`;
  /** The text that seeds this shop's hashed ids ('' for the first shop). */
  const tag = place.serial === 0 ? '' : `s${place.serial}:`;
  /** The suffix of a TypeID from a row number: 26 characters of digits (valid, sortable by number). */
  const orderCodePrefix = place.serial === 0 ? 'B' : `B${place.serial}S`;
  const numbered = (expression: string) => `'0' || lpad((${rowNumber(expression)})::text, 25, '0')`;
  /** A TRON address of this shop's row: 'B' invoice, 'W' wallet, 'F' payer, 'R' payout recipient. */
  const address = (kind: string, expression: string) => loaderAddress(kind, rowNumber(expression));
  const shop = `'${load.shopId}'`;
  const merchant = `'${load.merchantId}'`;
  const now = `'${nowIso}'::timestamptz`;
  const invoiceDeposits = load.deposits - load.walletDeposits;
  const invoices = invoiceDeposits + load.expiredInvoices;
  const wallets = Math.max(1, Math.ceil(load.walletDeposits / 10));
  /** Row i of n spread over the year, the last NEWEST_AGE_S ago. */
  const overYear = (i: string, n: number, startDays = 0) =>
    `${now} - make_interval(secs => ((${n} - (${i}))::float8 * ${YEAR_S - startDays * 86_400} / ${n} + ${NEWEST_AGE_S}))`;
  const statements: Array<{ label: string; sql: string }> = [];
  const add = (label: string, sql: string) => statements.push({ label, sql });

  add(
    'ledger accounts',
    `insert into ledger_accounts (id, merchant_id, currency, kind, debits_must_not_exceed_credits, created_at, shard, book)
     select 'acc_' || ${hashed(`'bench' || k.merchant_id || k.currency || k.kind || k.shard`)}, nullif(k.merchant_id, ''), k.currency, k.kind,
            k.merchant_id <> '', ${now} - interval '400 days', k.shard, 'sandbox'
       from (select ${merchant} as merchant_id, c as currency, kd as kind, 0 as shard
               from unnest(array['RUB', 'USDT']) as c, unnest(array['main', 'payout']) as kd
             union all select '', 'RUB', 'settlement', s from generate_series(0, ${SHARDS - 1}) as s
             union all select '', 'USDT', 'hot_wallet', s from generate_series(0, ${SHARDS - 1}) as s) as k
     on conflict on constraint ledger_accounts_owner_key do nothing`,
  );

  // Payments: 75 % paid, 15 % expired, 10 % failed; of the last day's, a third still pending (not yet expired).
  add(
    'payments',
    `insert into payments (id, shop_id, order_code, status, amount_kopecks, amount_total_kopecks, currency, method, order_id,
                           created_at, expires_at, paid_at, paid_method, paid_total_kopecks, failed_at, failure_reason, expired_at)
     select md5('payment${tag}' || i)::uuid, ${shop}, '${orderCodePrefix}' || lpad(i::text, 10, '0'), p.status, p.amount, p.amount, 'RUB', p.method,
            'order-' || lpad(i::text, 8, '0'), p.created_at,
            p.created_at + case when p.status = 'pending' then interval '1 day' else interval '1 hour' end,
            case when p.status = 'paid' then p.created_at + interval '40 seconds' end,
            case when p.status = 'paid' then coalesce(p.method, 'card') end,
            case when p.status = 'paid' then p.amount end,
            case when p.status = 'failed' then p.created_at + interval '50 seconds' end,
            case when p.status = 'failed' then 'card_declined' end,
            case when p.status = 'expired' then p.created_at + interval '1 hour' end
       from generate_series(1, ${load.payments}) as i,
       lateral (select ${overYear('i', load.payments)} as created_at) as t,
       lateral (select t.created_at,
                  case when t.created_at > ${now} - interval '1 day' and ${spread('i', 1)} < 333 then 'pending'
                       when ${spread('i', 2)} < 750 then 'paid' when ${spread('i', 2)} < 900 then 'expired' else 'failed' end as status,
                  (100 * (1 + ${spread('i', 3)} * ${spread('i', 4)} % 50000) + i % 100)::int8 as amount,
                  (array['card', 'sbp', 'sberpay', null])[1 + i % 4] as method) as p`,
  );
  add(
    'deposit addresses',
    `insert into crypto_addresses (address, key_id, derivation_index, shop_id, purpose, created_at)
     select ${address('B', 'i')}, 'sandbox', ${1_000_000_000 + place.invoicesBefore} + i, ${shop}, 'invoice', ${overYear('i', invoices, 30)} - interval '1 second'
       from generate_series(1, ${invoices}) as i
     union all
     select ${address('W', 'w')}, 'sandbox', ${1_500_000_000 + place.walletsBefore} + w, ${shop}, 'wallet', ${now} - make_interval(secs => ${YEAR_S} - w * 100.0)
       from generate_series(1, ${wallets}) as w`,
  );
  // Invoice i is paid by deposit i when i <= invoiceDeposits: 90 % exactly, 5 % over, 5 % under; the others expired unpaid.
  add(
    'invoices',
    `insert into crypto_invoices (id, shop_id, external_id, network, network_mode, amount_micro, paid_micro, address, status, lifetime_s,
                                  expires_at, paid_at, created_at, updated_at)
     select 'inv_' || ${numbered('i')}, ${shop}, 'ext-' || lpad(i::text, 8, '0'), 'TRC20', 'testnet', v.amount,
            case v.status when 'expired' then 0 when 'paid' then v.amount when 'overpaid' then v.amount + 1000000 else v.amount / 2 end,
            ${address('B', 'i')}, v.status, 3600, v.created_at + interval '1 hour',
            case when v.status in ('paid', 'overpaid') then v.created_at + interval '3 minutes' end,
            v.created_at, v.created_at + case when v.status = 'expired' then interval '1 hour' else interval '3 minutes' end
       from generate_series(1, ${invoices}) as i,
       lateral (select ${overYear('i', invoices, 30)} as created_at,
                  ((1 + ${spread('i', 5)} * ${spread('i', 6)} % 2000) * 1000000 + ${spread('i', 7)} * 1000)::int8 as amount,
                  case when i > ${invoiceDeposits} then 'expired' when ${spread('i', 8)} < 900 then 'paid'
                       when ${spread('i', 8)} < 950 then 'overpaid' else 'underpaid' end as status) as v`,
  );
  add(
    'wallets',
    `insert into crypto_wallets (id, shop_id, client_id, network, network_mode, address, status, created_at, updated_at)
     select 'wal_' || ${numbered('w')}, ${shop}, 'client-' || lpad(w::text, 6, '0'), 'TRC20', 'testnet', ${address('W', 'w')},
            case when w % 100 = 0 then 'blocked' else 'active' end, ${now} - make_interval(secs => ${YEAR_S} - w * 100.0),
            ${now} - make_interval(secs => ${YEAR_S} - w * 100.0)
       from generate_series(1, ${wallets}) as w`,
  );
  add(
    'invoice deposits',
    `insert into crypto_deposits (id, chain, shop_id, address, invoice_id, wallet_id, tx_id, log_index, block_number, block_id,
                                  from_address, amount_micro, status, late, seen_at, final_at, credit_round)
     select 'dep_' || ${numbered('i')}, 'tron-sandbox', ${shop}, v.address, v.id, null, ${hex64(`'${tag}tx' || i`)}, 0, b.n, ${historyBlockId('b.n')},
            ${address('F', 'i % 50000')}, v.paid_micro, 'credited', false, v.created_at + interval '1 minute',
            v.created_at + interval '3 minutes', 0
       from generate_series(1, ${invoiceDeposits}) as i
       join crypto_invoices v on v.id = 'inv_' || ${numbered('i')},
       lateral (select ${historyBlock(now, "v.created_at + interval '1 minute'")} as n) as b`,
  );
  // Wallet deposit j goes to wallet (j mod wallets) + 1, seen after the wallets' first month; a blocked wallet's are held.
  add(
    'wallet deposits',
    `insert into crypto_deposits (id, chain, shop_id, address, invoice_id, wallet_id, tx_id, log_index, block_number, block_id,
                                  from_address, amount_micro, status, late, seen_at, final_at, credit_round)
     select 'dep_' || ${numbered(`${invoiceDeposits} + j`)}, 'tron-sandbox', ${shop}, w.address, null, w.id,
            ${hex64(`'${tag}wtx' || j`)}, 0, b.n, ${historyBlockId('b.n')}, ${address('F', 'j % 50000')},
            ((1 + ${spread('j', 9)} % 500) * 1000000)::int8,
            case w.status when 'blocked' then 'held' else 'credited' end, false, d.seen_at, d.seen_at + interval '2 minutes', 0
       from generate_series(1, ${load.walletDeposits}) as j
       join crypto_wallets w on w.id = 'wal_' || ${numbered(`j % ${wallets} + 1`)},
       lateral (select ${overYear('j', load.walletDeposits, 30)} as seen_at) as d,
       lateral (select ${historyBlock(now, 'd.seen_at')} as n) as b`,
  );
  // Payouts from the seventh week on (after the first deposits): 95 % completed, 5 % failed; the first `batchedPayouts` in batches of 100.
  const batches = Math.ceil(load.batchedPayouts / 100);
  add(
    'payout batches',
    `insert into crypto_payout_batches (id, shop_id, external_id, network, status, item_count, total_debit_micro, created_at, updated_at, completed_at)
     select 'pob_' || ${numbered('b')}, ${shop}, 'batch-' || b, 'TRC20', 'completed', 100, 1, t.at, t.at + interval '5 minutes', t.at + interval '5 minutes'
       from generate_series(1, ${batches}) as b,
       lateral (select ${overYear('b', Math.max(batches, 1), 45)} as at) as t`,
  );
  const payoutRows = `generate_series(1, ${load.payouts}) as k,
       lateral (select case when k <= ${load.batchedPayouts} then ${overYear(`(k - 1) / 100 + 1`, Math.max(batches, 1), 45)}
                            else ${overYear('k', load.payouts, 45)} end as created_at,
                       ((1 + ${spread('k', 10)} % 1000) * 1000000)::int8 as amount,
                       case when ${spread('k', 11)} < 950 then 'completed' else 'failed' end as status) as v`;
  add(
    'payout outgoing transfers',
    `insert into crypto_outgoing_transfers (id, chain, purpose, owner_id, asset, from_kind, to_address, amount, status, tx_id, attempts,
                                            fee_sun, block_number, error_code, error_message, created_at, updated_at, submitted_at, final_at)
     select 'otx_' || ${numbered('k')}, 'tron-sandbox', 'payout', 'po_' || ${numbered('k')}, 'USDT', 'hot_wallet', ${address('R', 'k')},
            v.amount, case v.status when 'completed' then 'confirmed' else 'failed' end,
            case v.status when 'completed' then ${hex64(`'${tag}ptx' || k`)} end, 1,
            case v.status when 'completed' then 13000000 end,
            case v.status when 'completed' then ${historyBlock(now, "v.created_at + interval '1 minute'")} end,
            case v.status when 'failed' then 'reverted' end, case v.status when 'failed' then 'the transfer reverted' end,
            v.created_at, v.created_at + interval '2 minutes', v.created_at + interval '30 seconds', v.created_at + interval '2 minutes'
       from ${payoutRows}`,
  );
  add(
    'payouts',
    `insert into crypto_payouts (id, shop_id, external_id, batch_id, batch_index, network, chain, network_mode, recipient_address, amount_micro,
                                 network_fee_micro, service_fee_micro, total_debit_micro, trx_usdt_rate_micro, network_fee_actual_micro,
                                 status, outgoing_transfer_id, tx_hash, error_code, error_message, created_at, updated_at, completed_at)
     select 'po_' || ${numbered('k')}, ${shop}, 'payout-' || lpad(k::text, 6, '0'),
            case when k <= ${load.batchedPayouts} then 'pob_' || ${numbered('(k - 1) / 100 + 1')} end,
            case when k <= ${load.batchedPayouts} then ((k - 1) % 100)::int end,
            'TRC20', 'tron-sandbox', 'testnet', ${address('R', 'k')}, v.amount, 0, 0, v.amount, 250000,
            case v.status when 'completed' then 0 end, v.status, 'otx_' || ${numbered('k')},
            case v.status when 'completed' then ${hex64(`'${tag}ptx' || k`)} end,
            case v.status when 'failed' then 'transfer_failed' end, case v.status when 'failed' then 'the transfer reverted' end,
            v.created_at, v.created_at + interval '2 minutes', case v.status when 'completed' then v.created_at + interval '2 minutes' end
       from ${payoutRows}`,
  );
  add(
    'payout batch totals',
    `update crypto_payout_batches b set total_debit_micro = s.total,
            status = case when s.failed = 0 then 'completed' when s.failed = s.items then 'failed' else 'partially_completed' end
       from (select batch_id, sum(total_debit_micro) as total, count(*) filter (where status = 'failed') as failed, count(*) as items
               from crypto_payouts where shop_id = ${shop} and batch_id is not null group by batch_id) as s
      where b.id = s.batch_id`,
  );
  return statements;
}

/**
 * What follows from the shops' rows, once over all of `shopIds`: a ledger transfer per paid payment,
 * credited deposit and payout (its reservation and its post or void), and a webhook event, delivery
 * and attempt per final payment, final invoice, wallet deposit and payout. Each statement reads its
 * source table once, whatever the number of shops, and finds a row's merchant account through its shop.
 */
export function derivedStatements(shopIds: readonly string[]): Array<{ label: string; sql: string }> {
  const shops = `(${shopIds.map((id) => `'${id}'`).join(', ')})`;
  /** Joins, as `m`, the main account in `currency` of the merchant whose shop holds `alias`'s row. */
  const mainAccount = (alias: string, currency: string) =>
    `join shops sh on sh.id = ${alias}.shop_id
       join ledger_accounts m on m.book = 'sandbox' and m.kind = 'main' and m.currency = '${currency}' and m.shard = 0
                             and m.merchant_id = sh.merchant_id`;
  const statements: Array<{ label: string; sql: string }> = [];
  const add = (label: string, sql: string) => statements.push({ label, sql });
  add(
    'payment ledger transfers',
    `insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
                                   reference_type, reference_id, status, pending_id, chain_id, created_at)
     select 'trf_' || ${hashed(`'payment' || p.id::text`)}, 'payment:' || p.id, s.id, m.id, p.amount_kopecks, 'RUB', 'payment',
            'payment', p.id::text, 'posted', null, 'trf_' || ${hashed(`'payment' || p.id::text`)}, p.paid_at
       from payments p
       join ledger_accounts s on s.book = 'sandbox' and s.kind = 'settlement' and s.currency = 'RUB' and s.shard = ${shardOf('p.id::text')}
       ${mainAccount('p', 'RUB')}
      where p.shop_id in ${shops} and p.status = 'paid'`,
  );
  add(
    'deposit ledger transfers',
    `insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
                                   reference_type, reference_id, status, pending_id, chain_id, created_at)
     select 'trf_' || ${hashed(`'deposit' || d.id`)}, 'crypto-deposit:' || d.id, h.id, m.id, d.amount_micro, 'USDT', 'deposit',
            'deposit', d.id, 'posted', null, 'trf_' || ${hashed(`'deposit' || d.id`)}, d.final_at
       from crypto_deposits d
       join ledger_accounts h on h.book = 'sandbox' and h.kind = 'hot_wallet' and h.currency = 'USDT' and h.shard = ${shardOf('d.id')}
       ${mainAccount('d', 'USDT')}
      where d.shop_id in ${shops} and d.status = 'credited'`,
  );
  const reserveId = `'payout:' || p.id || ':amount'`;
  add(
    'payout ledger transfers',
    `with legs as (
       select p.id, p.amount_micro, p.status, p.created_at, p.updated_at, m.id as main, h.id as hot
         from crypto_payouts p
         join ledger_accounts h on h.book = 'sandbox' and h.kind = 'hot_wallet' and h.currency = 'USDT' and h.shard = ${shardOf('p.id')}
         ${mainAccount('p', 'USDT')}
        where p.shop_id in ${shops})
     insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type,
                                   reference_type, reference_id, status, pending_id, chain_id, created_at)
     select 'trf_' || ${hashed(reserveId)}, ${reserveId}, p.main, p.hot, p.amount_micro, 'USDT', 'payout', 'payout', p.id,
            'pending', null, 'trf_' || ${hashed(reserveId)}, p.created_at
       from legs p
     union all
     select 'trf_' || ${hashed(`${reserveId} || ':' || o.outcome`)}, ${reserveId} || ':' || o.outcome, p.main, p.hot, p.amount_micro,
            'USDT', 'payout', 'payout', p.id, case o.outcome when 'post' then 'posted' else 'voided' end,
            'trf_' || ${hashed(reserveId)}, 'trf_' || ${hashed(`${reserveId} || ':' || o.outcome`)}, p.updated_at
       from legs p, lateral (select case p.status when 'completed' then 'post' else 'void' end as outcome) as o`,
  );
  add(
    'webhook events',
    `insert into webhook_events (id, shop_id, type, payload, destination_url, created_at, subject_ids)
     select 'evt_' || ${hashed(`e.subject`)}, e.shop_id, e.type,
            json_build_object('id', 'evt_' || ${hashed(`e.subject`)}, 'type', e.type, 'created_at', e.at, 'data', e.data)::text,
            'https://shop.example.com/paygate/webhooks', e.at, e.subjects
       from (select p.shop_id, 'payment' || p.id as subject, 'payment.' || p.status as type, coalesce(p.paid_at, p.failed_at, p.expired_at) as at,
                    json_build_object('payment_id', p.id, 'status', p.status, 'order_id', p.order_id, 'amount', p.amount_kopecks) as data,
                    array[p.id::text] as subjects
               from payments p where p.shop_id in ${shops} and p.status <> 'pending'
             union all
             select v.shop_id, 'invoice' || v.id, 'crypto.invoice.updated', v.updated_at,
                    json_build_object('invoice_id', v.id, 'status', v.status, 'external_id', v.external_id, 'paid_micro', v.paid_micro),
                    array[v.id]
               from crypto_invoices v where v.shop_id in ${shops} and v.status <> 'pending'
             union all
             select d.shop_id, 'deposit' || d.id, 'crypto.wallet.deposit', d.final_at,
                    json_build_object('wallet_id', d.wallet_id, 'deposit_id', d.id, 'tx_hash', d.tx_id, 'amount_micro', d.amount_micro),
                    array[d.wallet_id, d.id]
               from crypto_deposits d where d.shop_id in ${shops} and d.wallet_id is not null
             union all
             select o.shop_id, 'payout' || o.id, 'crypto.payout.updated', o.updated_at,
                    json_build_object('payout_id', o.id, 'status', o.status, 'tx_hash', o.tx_hash), array[o.id]
               from crypto_payouts o where o.shop_id in ${shops}) as e
      order by e.at`,
  );
  add(
    'webhook deliveries',
    `insert into webhook_deliveries (id, event_id, shop_id, url, status, attempt_count, max_attempts, next_attempt_at,
                                     last_attempt_at, created_at, updated_at)
     select 'dlv_' || substr(e.id, 5), e.id, e.shop_id, e.destination_url, 'delivered', 1, 8, null,
            e.created_at + interval '80 milliseconds', e.created_at, e.created_at + interval '80 milliseconds'
       from webhook_events e where e.shop_id in ${shops}`,
  );
  add(
    'webhook attempts',
    `insert into webhook_attempts (id, delivery_id, event_id, attempt_number, url, started_at, duration_ms, outcome, status_code, response_body)
     select 'att_' || substr(e.id, 5), 'dlv_' || substr(e.id, 5), e.id, 1, e.destination_url, e.created_at + interval '10 milliseconds',
            70, 'succeeded', 200, 'ok'
       from webhook_events e where e.shop_id in ${shops}`,
  );
  return statements;
}

/**
 * The ledger's history and account totals over every transfer loaded: run once, after every shop's
 * statements (the history's running balances are per account, in time order, across shops).
 */
export function ledgerHistoryStatements(): Array<{ label: string; sql: string }> {
  const statements: Array<{ label: string; sql: string }> = [];
  const add = (label: string, sql: string) => statements.push({ label, sql });
  // The history: per transfer, an entry for each account whose available balance it changed
  // (ledger-service.ts: available = credits_posted - debits_posted - debits_pending).
  add(
    'ledger history',
    `insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at, type)
     select 'op_' || ${hashed(`e.transfer_id || ':' || e.side`)}, e.account_id, e.transfer_id, e.origin_id, e.amount,
            sum(e.amount) over (partition by e.account_id order by e.created_at, e.transfer_id, e.side rows unbounded preceding),
            e.created_at, e.type
       from (select id as transfer_id, id as origin_id, debit_account_id as account_id, -amount as amount, created_at, 0 as side, type
               from ledger_transfers where status = 'posted' and pending_id is null
             union all
             select id, id, credit_account_id, amount, created_at, 1, type from ledger_transfers where status = 'posted' and pending_id is null
             union all
             select id, id, debit_account_id, -amount, created_at, 0, type from ledger_transfers where status = 'pending'
             union all
             -- The closing transfer carries its reservation's type (payout-ledger.ts posts and voids with it).
             select id, pending_id, credit_account_id, amount, created_at, 1, type from ledger_transfers where status = 'posted' and pending_id is not null
             union all
             select id, pending_id, debit_account_id, amount, created_at, 0, type from ledger_transfers where status = 'voided') as e
      order by e.created_at, e.transfer_id, e.side`,
  );
  add(
    'ledger account totals',
    `with closed as (select pending_id from ledger_transfers where pending_id is not null),
     effective as (
       -- A join rather than NOT EXISTS per row: bench:growth loads without the pending_id index.
       select t.debit_account_id, t.credit_account_id,
              case when t.status = 'posted' then t.amount else 0 end as posted,
              case when t.status = 'pending' and c.pending_id is null then t.amount else 0 end as pending
         from ledger_transfers t left join closed c on c.pending_id = t.id
     ), sides as (
       select debit_account_id as account_id, pending as debits_pending, posted as debits_posted, 0::int8 as credits_pending, 0::int8 as credits_posted from effective
       union all
       select credit_account_id, 0, 0, pending, posted from effective
     )
     update ledger_accounts a
        set debits_pending = d.debits_pending, debits_posted = d.debits_posted, credits_pending = d.credits_pending, credits_posted = d.credits_posted
       from (select account_id, sum(debits_pending) as debits_pending, sum(debits_posted) as debits_posted,
                    sum(credits_pending) as credits_pending, sum(credits_posted) as credits_posted
               from sides group by account_id) as d
      where a.id = d.account_id`,
  );

  return statements;
}

/**
 * The running USDT totals of `shopIds`' deposit addresses, as settlement and the sweeper keep them
 * (migration 0057): the final deposits' sum and the completed sweeps'. Runs after both are loaded.
 */
export function addressTotalsStatement(shopIds: readonly string[]): { label: string; sql: string } {
  const shops = `(${shopIds.map((id) => `'${id}'`).join(', ')})`;
  return {
    label: 'address USDT totals',
    sql: `
      update crypto_addresses a set final_usdt_micro = coalesce(f.total, 0), swept_usdt_micro = coalesce(s.total, 0)
        from crypto_addresses x
        left join (select address, sum(amount_micro)::int8 as total from crypto_deposits
                    where shop_id in ${shops} and status in ('credited', 'held') group by address) f on f.address = x.address
        left join (select address, sum(amount_micro)::int8 as total from crypto_sweeps
                    where status = 'completed' group by address) s on s.address = x.address
       where a.address = x.address and x.shop_id in ${shops} and (f.total is not null or s.total is not null)`,
  };
}

/** Made before any shop's rows on each loading connection, dropped after them: the addresses' function. */
export const addressFunction = {
  create: { label: 'address function', sql: CREATE_ADDRESS_FUNCTION },
  drop: { label: 'address function dropped', sql: DROP_ADDRESS_FUNCTION },
} as const;

/** One shop's rows, what follows from them, and the ledger's history: the whole of bench:cabinet's load. */
export function cabinetLoadStatements(load: CabinetLoad, nowIso: string): Array<{ label: string; sql: string }> {
  const derived = derivedStatements([load.shopId]);
  return [
    addressFunction.create,
    ...shopRowStatements(load, nowIso),
    addressFunction.drop,
    ...(load.events ? derived : derived.filter((statement) => !statement.label.startsWith('webhook'))),
    addressTotalsStatement([load.shopId]),
    ...ledgerHistoryStatements(),
  ];
}

/** Runs the load on `client` (a database the gateway has migrated), then VACUUM ANALYZE and a checkpoint. */
export async function loadCabinetData(
  client: pg.Client,
  load: CabinetLoad,
  report: (line: string) => void,
): Promise<void> {
  await client.query(`set work_mem = '256MB'`);
  await client.query(`set maintenance_work_mem = '1GB'`);
  await client.query(`set synchronous_commit = off`);
  // Foreign keys hold by construction (every row points at one inserted before it); their per-row
  // triggers would triple the load's time. `replica` skips them (and the queue's notify triggers).
  await client.query(`set session_replication_role = replica`);
  const nowIso = new Date().toISOString();
  for (const statement of cabinetLoadStatements(load, nowIso)) {
    const started = process.hrtime.bigint();
    const result = await client.query(statement.sql);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    report(`  ${statement.label}: ${result.rowCount ?? 0} rows in ${seconds.toFixed(1)} s`);
  }
  const started = process.hrtime.bigint();
  await client.query('vacuum analyze');
  await client.query('checkpoint');
  report(`  vacuum analyze + checkpoint: ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
}
