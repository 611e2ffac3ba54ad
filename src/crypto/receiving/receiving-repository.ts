// SQL of crypto receiving: addresses and their index counters, invoices,
// wallets, deposits, and the chain watcher's cursor, lease and scanned blocks.
import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import { newestFirstPage, withinRange, type ListRange, type ListWindow } from '../../db/list-page.ts';
import { releaseRowLease, takeRowLease } from '../../db/row-lease.ts';
import { recordsInsertFrom, type NewIdempotencyRecord } from '../../idempotency/idempotency-service.ts';
import type { AddressKeyId, ChainName } from '../chain/crypto-chain.ts';
import type { CryptoReceivingTables, DepositStatus, InvoiceStatus, WalletStatus } from './receiving-tables.ts';

export type AddressRow = Selectable<CryptoReceivingTables['crypto_addresses']>;
export type InvoiceRow = Selectable<CryptoReceivingTables['crypto_invoices']>;
export type WalletRow = Selectable<CryptoReceivingTables['crypto_wallets']>;
export type DepositRow = Selectable<CryptoReceivingTables['crypto_deposits']>;
export type CursorRow = Selectable<CryptoReceivingTables['crypto_chain_cursors']>;

/**
 * `column = any($1::text[])`: a list of values as ONE array parameter, so the statement text is
 * the same whatever the count (prepared once per connection, planned cheaply) where a long
 * IN list would be a new text of thousands of parameters each time.
 */
function anyOf(column: string, values: readonly string[]) {
  return sql<boolean>`${sql.ref(column)} = any(${[...values]}::text[])`;
}

// ---- addresses ----

/** Takes the next derivation index of the key (on the root handle: it commits at once, holding the counter row for this statement only). */
export async function takeNextIndex(db: Executor<CryptoReceivingTables>, keyId: AddressKeyId): Promise<number> {
  const row = await db
    .updateTable('crypto_address_counters')
    .set((eb) => ({ next_index: eb('next_index', '+', 1n) }))
    .where('key_id', '=', keyId)
    .returning('next_index')
    .executeTakeFirstOrThrow();
  return Number(row.next_index) - 1;
}

export async function insertAddress(
  tx: Tx<CryptoReceivingTables>,
  row: Insertable<CryptoReceivingTables['crypto_addresses']>,
): Promise<void> {
  await tx.insertInto('crypto_addresses').values(row).execute();
}

/** Which of these addresses are ours (of this key): one primary-key probe per address. */
export async function findOurAddresses(
  db: Executor<CryptoReceivingTables>,
  keyId: AddressKeyId,
  addresses: readonly string[],
): Promise<AddressRow[]> {
  if (addresses.length === 0) return [];
  return db
    .selectFrom('crypto_addresses')
    .selectAll()
    .where(anyOf('address', addresses))
    .where('key_id', '=', keyId)
    .execute();
}

/** Which of these addresses are deposit addresses of this gateway, of either key (one primary-key probe each). */
export async function depositAddressesAmong(
  db: Executor<CryptoReceivingTables>,
  addresses: readonly string[],
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db.selectFrom('crypto_addresses').select('address').where(anyOf('address', addresses)).execute();
  return new Set(rows.map((row) => row.address));
}

/** `exists (…)`: whether this address (a value, or a column of the caller's query) is a deposit address of this gateway, as an expression of another module's read. */
export function isDepositAddressSql(address: string | RawBuilder<unknown>) {
  return sql<boolean>`exists (select 1 from crypto_addresses where address = ${address})`;
}

/** The address this key derived first (the lowest index on record), if it derived any. */
export async function firstAddressOfKey(
  db: Executor<CryptoReceivingTables>,
  keyId: AddressKeyId,
): Promise<{ address: string; derivation_index: bigint } | undefined> {
  return db
    .selectFrom('crypto_addresses')
    .select(['address', 'derivation_index'])
    .where('key_id', '=', keyId)
    .orderBy('derivation_index')
    .limit(1)
    .executeTakeFirst();
}

export async function hasAddressesOfKey(db: Executor<CryptoReceivingTables>, keyId: AddressKeyId): Promise<boolean> {
  const row = await db
    .selectFrom('crypto_addresses')
    .select('address')
    .where('key_id', '=', keyId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listAddresses(
  db: Executor<CryptoReceivingTables>,
  options: { readonly limit: number; readonly after?: string | undefined; readonly shopId?: string | undefined },
): Promise<AddressRow[]> {
  let query = db.selectFrom('crypto_addresses').selectAll();
  if (options.after !== undefined) query = query.where('address', '>', options.after);
  if (options.shopId !== undefined) query = query.where('shop_id', '=', options.shopId);
  return query.orderBy('address').limit(options.limit).execute();
}

export async function setUnderpaidToleranceBps(
  tx: Tx<CryptoReceivingTables>,
  shopId: string,
  bps: number,
  at: Date,
): Promise<void> {
  await tx
    .insertInto('crypto_shop_settings')
    .values({ shop_id: shopId, underpaid_tolerance_bps: bps, updated_at: at })
    .onConflict((conflict) => conflict.column('shop_id').doUpdateSet({ underpaid_tolerance_bps: bps, updated_at: at }))
    .execute();
}

/** Each of these shops' minimum deposit; a shop without a settings row gets `fallbackMicro`. */
export async function minimumDeposits(
  db: Executor<CryptoReceivingTables>,
  shopIds: readonly string[],
  fallbackMicro: bigint,
): Promise<Map<string, bigint>> {
  const minimums = new Map(shopIds.map((id) => [id, fallbackMicro]));
  if (shopIds.length === 0) return minimums;
  const rows = await db
    .selectFrom('crypto_shop_settings')
    .select(['shop_id', 'min_deposit_micro'])
    .where('shop_id', 'in', [...shopIds])
    .execute();
  for (const row of rows) minimums.set(row.shop_id, row.min_deposit_micro);
  return minimums;
}

export async function setMinimumDeposit(
  tx: Tx<CryptoReceivingTables>,
  shopId: string,
  minimumMicro: bigint,
  at: Date,
): Promise<void> {
  await tx
    .insertInto('crypto_shop_settings')
    .values({ shop_id: shopId, underpaid_tolerance_bps: 0, min_deposit_micro: minimumMicro, updated_at: at })
    .onConflict((conflict) =>
      conflict.column('shop_id').doUpdateSet({ min_deposit_micro: minimumMicro, updated_at: at }),
    )
    .execute();
}

// ---- invoices ----

export async function findInvoiceOfShop(
  db: Executor<CryptoReceivingTables>,
  shopId: string,
  invoiceId: string,
): Promise<InvoiceRow | undefined> {
  return db
    .selectFrom('crypto_invoices')
    .selectAll()
    .where('id', '=', invoiceId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

export async function findInvoiceById(
  db: Executor<CryptoReceivingTables>,
  invoiceId: string,
): Promise<InvoiceRow | undefined> {
  return db.selectFrom('crypto_invoices').selectAll().where('id', '=', invoiceId).executeTakeFirst();
}

export async function findInvoicesByAddresses(
  db: Executor<CryptoReceivingTables>,
  addresses: readonly string[],
): Promise<InvoiceRow[]> {
  if (addresses.length === 0) return [];
  return db.selectFrom('crypto_invoices').selectAll().where(anyOf('address', addresses)).execute();
}

/** What the cabinet's tables narrow a list by beyond the API's filters: days, amounts, and one exact search. */
export interface TableNarrowing {
  readonly range?: ListRange | undefined;
  /** Exact: an id, an external or client id, an address or a transaction hash. */
  readonly search?: string | undefined;
}

export async function listInvoices(
  db: Executor<CryptoReceivingTables>,
  query: ListWindow &
    TableNarrowing & { shopId: string; status?: InvoiceStatus | undefined; externalId?: string | undefined },
): Promise<InvoiceRow[]> {
  let builder = db.selectFrom('crypto_invoices').selectAll().where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  if (query.externalId !== undefined) builder = builder.where('external_id', '=', query.externalId);
  if (query.range) builder = withinRange(builder, query.range, 'amount_micro');
  const search = query.search;
  // The invoices the search names, each way through its own index (a plain OR with the
  // deposits' subquery would walk the shop's invoices instead), then the page of those.
  if (search !== undefined)
    builder = builder.where('id', 'in', (eb) =>
      eb
        .selectFrom('crypto_invoices as named')
        .select('named.id')
        .where('named.shop_id', '=', query.shopId)
        .where((inner) =>
          inner.or([
            inner('named.id', '=', search),
            inner('named.external_id', '=', search),
            inner('named.address', '=', search),
          ]),
        )
        .unionAll(
          // An invoice a deposit of this transaction paid (tx_id leads a unique index).
          eb
            .selectFrom('crypto_deposits')
            .select('crypto_deposits.invoice_id as id')
            .where('crypto_deposits.tx_id', '=', search)
            .where('crypto_deposits.shop_id', '=', query.shopId)
            .where('crypto_deposits.invoice_id', 'is not', null)
            .$narrowType<{ id: string }>(),
        ),
    );
  return newestFirstPage(builder, query);
}

export async function updateInvoice(
  tx: Tx<CryptoReceivingTables>,
  invoiceId: string,
  changes: { status: InvoiceStatus; paid_micro?: bigint; paid_at?: Date | null; updated_at: Date },
): Promise<InvoiceRow> {
  return tx
    .updateTable('crypto_invoices')
    .set(changes)
    .where('id', '=', invoiceId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** pending → confirming for these invoices; returns the ones that moved. */
export async function markInvoicesConfirming(
  tx: Tx<CryptoReceivingTables>,
  invoices: readonly InvoiceRow[],
  at: Date,
): Promise<InvoiceRow[]> {
  if (invoices.length === 0) return [];
  const moved = await tx
    .updateTable('crypto_invoices')
    .set({ status: 'confirming', updated_at: at })
    .where(
      anyOf(
        'id',
        invoices.map((invoice) => invoice.id),
      ),
    )
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  // Only the ids come back: a pending invoice changes only by leaving pending, so the rows
  // the caller read (in this transaction) are current for every invoice that moved.
  const movedIds = new Set(moved.map((row) => row.id));
  return invoices
    .filter((invoice) => movedIds.has(invoice.id))
    .map((invoice) => ({ ...invoice, status: 'confirming', updated_at: at }));
}

/**
 * Locks up to `limit` open invoices past their expires_at that no other worker holds
 * and that have no deposit still confirming (settlement decides those).
 */
export async function claimExpiredOpenInvoices(
  tx: Tx<CryptoReceivingTables>,
  now: Date,
  limit: number,
): Promise<InvoiceRow[]> {
  return tx
    .selectFrom('crypto_invoices')
    .selectAll()
    .where('status', 'in', ['pending', 'confirming'])
    .where('expires_at', '<=', now)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('crypto_deposits')
            .select('crypto_deposits.id')
            .whereRef('crypto_deposits.invoice_id', '=', 'crypto_invoices.id')
            .where('crypto_deposits.status', '=', 'confirming'),
        ),
      ),
    )
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/**
 * The sandbox's expire helper: one open invoice of the shop with no deposit still confirming
 * closes now, as the expiry pass would close it at expires_at (underpaid when part is paid),
 * and its expires_at becomes now, so a later deposit counts as late. Undefined when it is not
 * open, not the shop's, or waits for a deposit's finality.
 */
export async function expireOpenInvoiceNow(
  tx: Tx<CryptoReceivingTables>,
  shopId: string,
  invoiceId: string,
  now: Date,
): Promise<InvoiceRow | undefined> {
  return tx
    .updateTable('crypto_invoices')
    .set({
      status: sql<InvoiceStatus>`case when paid_micro > 0 then 'underpaid' else 'expired' end`,
      expires_at: sql<Date>`least(expires_at, ${now})`,
      updated_at: now,
    })
    .where('id', '=', invoiceId)
    .where('shop_id', '=', shopId)
    .where('status', 'in', ['pending', 'confirming'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('crypto_deposits')
            .select('crypto_deposits.id')
            .whereRef('crypto_deposits.invoice_id', '=', 'crypto_invoices.id')
            .where('crypto_deposits.status', '=', 'confirming'),
        ),
      ),
    )
    .returningAll()
    .executeTakeFirst();
}

// ---- wallets ----

export async function insertWallet(
  tx: Tx<CryptoReceivingTables>,
  row: Insertable<CryptoReceivingTables['crypto_wallets']>,
): Promise<WalletRow> {
  return tx.insertInto('crypto_wallets').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findWalletOfShop(
  db: Executor<CryptoReceivingTables>,
  shopId: string,
  walletId: string,
): Promise<WalletRow | undefined> {
  return db
    .selectFrom('crypto_wallets')
    .selectAll()
    .where('id', '=', walletId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

export async function findWalletById(
  db: Executor<CryptoReceivingTables>,
  walletId: string,
): Promise<WalletRow | undefined> {
  return db.selectFrom('crypto_wallets').selectAll().where('id', '=', walletId).executeTakeFirst();
}

export async function findWalletsByAddresses(
  db: Executor<CryptoReceivingTables>,
  addresses: readonly string[],
): Promise<WalletRow[]> {
  if (addresses.length === 0) return [];
  return db.selectFrom('crypto_wallets').selectAll().where(anyOf('address', addresses)).execute();
}

export async function listWallets(
  db: Executor<CryptoReceivingTables>,
  query: ListWindow &
    TableNarrowing & { shopId: string; status?: WalletStatus | undefined; clientId?: string | undefined },
): Promise<WalletRow[]> {
  let builder = db.selectFrom('crypto_wallets').selectAll().where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  if (query.clientId !== undefined) builder = builder.where('client_id', '=', query.clientId);
  if (query.range) builder = withinRange(builder, query.range);
  const search = query.search;
  if (search !== undefined)
    builder = builder.where((eb) =>
      eb.or([eb('id', '=', search), eb('client_id', '=', search), eb('address', '=', search)]),
    );
  return newestFirstPage(builder, query);
}

/** active ⇄ blocked; undefined when the wallet is not in `from` (or not the shop's). */
export async function transitionWallet(
  tx: Tx<CryptoReceivingTables>,
  shopId: string,
  walletId: string,
  from: WalletStatus,
  to: WalletStatus,
  at: Date,
): Promise<WalletRow | undefined> {
  return tx
    .updateTable('crypto_wallets')
    .set({ status: to, updated_at: at })
    .where('id', '=', walletId)
    .where('shop_id', '=', shopId)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/** Sums of credited and held deposits per wallet. */
export async function walletTotals(
  db: Executor<CryptoReceivingTables>,
  walletIds: readonly string[],
): Promise<Map<string, { receivedMicro: bigint; heldMicro: bigint }>> {
  const totals = new Map<string, { receivedMicro: bigint; heldMicro: bigint }>();
  for (const id of walletIds) totals.set(id, { receivedMicro: 0n, heldMicro: 0n });
  if (walletIds.length === 0) return totals;
  const rows = await db
    .selectFrom('crypto_deposits')
    .select(['wallet_id', 'status', (eb) => eb.fn.sum<string>('amount_micro').as('total')])
    .where('wallet_id', 'in', walletIds)
    .where('status', 'in', ['credited', 'held'])
    .groupBy(['wallet_id', 'status'])
    .execute();
  for (const row of rows) {
    const entry = totals.get(row.wallet_id!)!;
    const total = BigInt(row.total);
    totals.set(
      row.wallet_id!,
      row.status === 'credited' ? { ...entry, receivedMicro: total } : { ...entry, heldMicro: total },
    );
  }
  return totals;
}

// ---- deposits ----

export async function depositsOfWallet(
  db: Executor<CryptoReceivingTables>,
  walletId: string,
  limit: number,
): Promise<DepositRow[]> {
  return db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where('wallet_id', '=', walletId)
    .orderBy('seen_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * A shop's deposits (to invoices and wallets), newest seen first by (seen_at, id):
 * a deposit has no created_at, it is made when the watcher first sees it.
 */
export async function listDeposits(
  db: Executor<CryptoReceivingTables>,
  query: ListWindow & TableNarrowing & { shopId: string; status?: DepositStatus | undefined },
): Promise<DepositRow[]> {
  let builder = db.selectFrom('crypto_deposits').selectAll().where('shop_id', '=', query.shopId);
  if (query.status !== undefined) builder = builder.where('status', '=', query.status);
  const range = query.range ?? {};
  if (range.createdFrom) builder = builder.where('seen_at', '>=', range.createdFrom);
  if (range.createdBefore) builder = builder.where('seen_at', '<', range.createdBefore);
  if (range.amountMin !== undefined) builder = builder.where('amount_micro', '>=', range.amountMin);
  if (range.amountMax !== undefined) builder = builder.where('amount_micro', '<=', range.amountMax);
  const search = query.search;
  if (search !== undefined)
    builder = builder.where((eb) =>
      eb.or([eb('id', '=', search), eb('address', '=', search), eb('tx_id', '=', search)]),
    );
  const after = query.after;
  if (after)
    builder = builder.where((eb) =>
      eb.or([
        eb('seen_at', '<', after.createdAt),
        eb.and([eb('seen_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  return builder.orderBy('seen_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
}

/** A deposit of this shop, whole, or undefined. */
export async function findDepositOfShop(
  db: Executor<CryptoReceivingTables>,
  shopId: string,
  depositId: string,
): Promise<DepositRow | undefined> {
  return db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where('id', '=', depositId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

export async function depositsOfInvoice(db: Executor<CryptoReceivingTables>, invoiceId: string): Promise<DepositRow[]> {
  return db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where('invoice_id', '=', invoiceId)
    .orderBy('seen_at')
    .orderBy('id')
    .execute();
}

export async function findDepositsByKeys(
  db: Executor<CryptoReceivingTables>,
  keys: readonly { txId: string; logIndex: number }[],
): Promise<DepositRow[]> {
  // By tx_id (the unique index's first column), then matched on log_index here.
  const wanted = new Set(keys.map((key) => `${key.txId}:${key.logIndex}`));
  if (keys.length === 0) return [];
  const rows = await db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where(anyOf('tx_id', [...new Set(keys.map((key) => key.txId))]))
    .execute();
  return rows.filter((row) => wanted.has(`${row.tx_id}:${row.log_index}`));
}

/**
 * Inserts the deposits not recorded yet (those whose (tx_id, log_index) exists are left
 * out); returns those inserted. One statement whatever the count: each column is one array
 * parameter (unnest), so the text is prepared once. Only the ids come back: the rows
 * returned are the caller's own (thousands need not travel back and be parsed again).
 */
export async function insertDeposits(
  tx: Tx<CryptoReceivingTables>,
  rows: readonly DepositRow[],
): Promise<DepositRow[]> {
  if (rows.length === 0) return [];
  const column = (pick: (row: DepositRow) => string | null) => rows.map(pick);
  const result = await sql<{ id: string }>`
    insert into crypto_deposits (id, chain, shop_id, address, invoice_id, wallet_id, tx_id, log_index, block_number, block_id,
      from_address, amount_micro, status, late, seen_at, final_at, credit_round, evidence)
    select * from unnest(${column((row) => row.id)}::text[], ${column((row) => row.chain)}::text[], ${column((row) => row.shop_id)}::text[],
      ${column((row) => row.address)}::text[], ${column((row) => row.invoice_id)}::text[], ${column((row) => row.wallet_id)}::text[],
      ${column((row) => row.tx_id)}::text[], ${column((row) => String(row.log_index))}::int4[], ${column((row) => String(row.block_number))}::int8[],
      ${column((row) => row.block_id)}::text[], ${column((row) => row.from_address)}::text[], ${column((row) => String(row.amount_micro))}::int8[],
      ${column((row) => row.status)}::text[], ${column((row) => String(row.late))}::bool[], ${column((row) => row.seen_at.toISOString())}::timestamptz[],
      ${column((row) => row.final_at?.toISOString() ?? null)}::timestamptz[], ${column((row) => String(row.credit_round))}::int4[],
      ${column((row) => row.evidence)}::text[])
    on conflict (tx_id, log_index) do nothing
    returning id`.execute(tx);
  const written = new Set(result.rows.map((row) => row.id));
  return rows.filter((row) => written.has(row.id));
}

/** An orphaned deposit seen again (in another block): back to confirming, with its new block and its next pending credit. */
export async function reviveDeposit(
  tx: Tx<CryptoReceivingTables>,
  depositId: string,
  blockNumber: number,
  blockId: string,
): Promise<DepositRow | undefined> {
  return tx
    .updateTable('crypto_deposits')
    .set((eb) => ({
      status: 'confirming',
      block_number: BigInt(blockNumber),
      block_id: blockId,
      credit_round: eb('credit_round', '+', 1),
    }))
    .where('id', '=', depositId)
    .where('status', '=', 'orphaned')
    .returningAll()
    .executeTakeFirst();
}

/** A confirming deposit seen in another block than recorded (a reorg that moved it before we noticed). */
export async function moveDeposit(
  tx: Tx<CryptoReceivingTables>,
  depositId: string,
  blockNumber: number,
  blockId: string,
): Promise<void> {
  await tx
    .updateTable('crypto_deposits')
    .set({ block_number: BigInt(blockNumber), block_id: blockId })
    .where('id', '=', depositId)
    .where('status', '=', 'confirming')
    .execute();
}

/** Confirming deposits of blocks above `blockNumber` become orphaned; returns them. */
export async function orphanDepositsAbove(
  tx: Tx<CryptoReceivingTables>,
  chain: ChainName,
  blockNumber: number,
): Promise<DepositRow[]> {
  return tx
    .updateTable('crypto_deposits')
    .set({ status: 'orphaned' })
    .where('chain', '=', chain)
    .where('status', '=', 'confirming')
    .where('block_number', '>', BigInt(blockNumber))
    .returningAll()
    .execute();
}

/** The confirming deposits of blocks up to `blockNumber`, oldest block first, at most `limit`. */
export async function finalDeposits(
  db: Executor<CryptoReceivingTables>,
  chain: ChainName,
  blockNumber: number,
  limit: number,
): Promise<DepositRow[]> {
  return db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where('chain', '=', chain)
    .where('status', '=', 'confirming')
    .where('block_number', '<=', BigInt(blockNumber))
    .orderBy('block_number')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export async function findDepositById(
  db: Executor<CryptoReceivingTables>,
  depositId: string,
): Promise<DepositRow | undefined> {
  return db.selectFrom('crypto_deposits').selectAll().where('id', '=', depositId).executeTakeFirst();
}

/** Unconfirmed deposits (held for the operator), oldest block first. */
export async function unconfirmedDeposits(db: Executor<CryptoReceivingTables>, limit: number): Promise<DepositRow[]> {
  return db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where('status', '=', 'unconfirmed')
    .orderBy('block_number')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** An unconfirmed deposit back to confirming with its next pending credit round (an operator's release); undefined unless it was unconfirmed. */
export async function reconfirmDeposit(
  tx: Tx<CryptoReceivingTables>,
  depositId: string,
): Promise<DepositRow | undefined> {
  return tx
    .updateTable('crypto_deposits')
    .set((eb) => ({ status: 'confirming', credit_round: eb('credit_round', '+', 1) }))
    .where('id', '=', depositId)
    .where('status', '=', 'unconfirmed')
    .returningAll()
    .executeTakeFirst();
}

/** These confirming deposits become `unconfirmed` (held for the operator); returns those that were confirming. */
export async function markDepositsUnconfirmed(
  tx: Tx<CryptoReceivingTables>,
  depositIds: readonly string[],
): Promise<DepositRow[]> {
  if (depositIds.length === 0) return [];
  return tx
    .updateTable('crypto_deposits')
    .set({ status: 'unconfirmed' })
    .where(anyOf('id', depositIds))
    .where('status', '=', 'confirming')
    .returningAll()
    .execute();
}

/** Final (credited or held) deposits of these addresses: the custody view's records. */
export async function finalDepositsOfAddresses(
  db: Executor<CryptoReceivingTables>,
  addresses: readonly string[],
): Promise<DepositRow[]> {
  if (addresses.length === 0) return [];
  return db
    .selectFrom('crypto_deposits')
    .selectAll()
    .where('address', 'in', addresses)
    .where('status', 'in', ['credited', 'held'])
    .execute();
}

// ---- reads of deposits and addresses by other crypto modules (through receiving-service.ts) ----

/** What a refund needs to know of a deposit. */
export type DepositSummary = Pick<DepositRow, 'id' | 'chain' | 'status' | 'amount_micro'>;
const DEPOSIT_SUMMARY_COLUMNS = ['id', 'chain', 'status', 'amount_micro'] as const;

export async function findDepositSummaryOfShop(
  db: Executor<CryptoReceivingTables>,
  shopId: string,
  depositId: string,
): Promise<DepositSummary | undefined> {
  return db
    .selectFrom('crypto_deposits')
    .select(DEPOSIT_SUMMARY_COLUMNS)
    .where('id', '=', depositId)
    .where('shop_id', '=', shopId)
    .executeTakeFirst();
}

/** An invoice's credited deposits, in block order. */
export async function creditedDepositsOfInvoice(
  db: Executor<CryptoReceivingTables>,
  invoiceId: string,
): Promise<DepositSummary[]> {
  return db
    .selectFrom('crypto_deposits')
    .select(DEPOSIT_SUMMARY_COLUMNS)
    .where('invoice_id', '=', invoiceId)
    .where('status', '=', 'credited')
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
}

/** The key and derivation index of each of these addresses that is a deposit address. */
export async function addressDerivations(
  db: Executor<CryptoReceivingTables>,
  addresses: readonly string[],
): Promise<Map<string, Pick<AddressRow, 'key_id' | 'derivation_index'>>> {
  if (addresses.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_addresses')
    .select(['address', 'key_id', 'derivation_index'])
    .where(anyOf('address', addresses))
    .execute();
  return new Map(rows.map((row) => [row.address, { key_id: row.key_id, derivation_index: row.derivation_index }]));
}

// Statement fragments: sweeping's queries read final USDT per address beside its
// own rows in one statement (one snapshot), so receiving hands out the SQL of its
// side rather than rows.

/**
 * Relation (address, derivation_index, unswept_micro): the key's addresses whose final
 * deposits are not all swept, from their running totals (crypto_addresses_unswept_idx,
 * migration 0057: the few such rows, never the year's).
 */
export function unsweptAddressesSql(keyId: AddressKeyId): RawBuilder<unknown> {
  return sql`
    select a.address, a.derivation_index, a.unswept_usdt_micro as unswept_micro
    from crypto_addresses a
    where a.key_id = ${keyId} and a.unswept_usdt_micro > 0`;
}

/** Relation (address, final_micro, swept_micro, unswept_micro): these addresses' running totals, those that are deposit addresses. */
export function usdtTotalsOfAddressesSql(addresses: readonly string[]): RawBuilder<unknown> {
  return sql`(select address, final_usdt_micro as final_micro, swept_usdt_micro as swept_micro, unswept_usdt_micro as unswept_micro
    from crypto_addresses where address in (${sql.join(addresses)}))`;
}

/** Scalar: when the oldest deposit on the address that became final after `after` became final (null when none). */
export function oldestFinalDepositAfterSql(
  address: RawBuilder<unknown>,
  after: RawBuilder<unknown>,
): RawBuilder<Date | null> {
  return sql<Date | null>`(select min(d.final_at) from crypto_deposits d
        where d.address = ${address} and d.status in ('credited', 'held') and d.final_at > ${after})`;
}

/** `exists (…)`: whether this address (a column of the caller's query) is one the key derived. */
export function isAddressOfKeySql(address: RawBuilder<unknown>, keyId: AddressKeyId): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from crypto_addresses where address = ${address} and key_id = ${keyId})`;
}

// ---- ignored dust ----

export type IgnoredDepositRow = Selectable<CryptoReceivingTables['crypto_ignored_deposits']>;

/**
 * Records dust transfers; one seen again (a rescan, or in another block after a
 * reorganisation) keeps its row with the block it is in now.
 */
export async function upsertIgnoredDeposits(
  tx: Tx<CryptoReceivingTables>,
  rows: readonly IgnoredDepositRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insertInto('crypto_ignored_deposits')
    .values([...rows])
    .onConflict((conflict) =>
      conflict.columns(['tx_id', 'log_index']).doUpdateSet((eb) => ({
        block_number: eb.ref('excluded.block_number'),
        block_id: eb.ref('excluded.block_id'),
      })),
    )
    .execute();
}

/** Dust in blocks above `blockNumber` is forgotten: a reorganisation took those blocks away. */
export async function forgetIgnoredDepositsAbove(
  tx: Tx<CryptoReceivingTables>,
  chain: ChainName,
  blockNumber: number,
): Promise<void> {
  await tx
    .deleteFrom('crypto_ignored_deposits')
    .where('chain', '=', chain)
    .where('block_number', '>', BigInt(blockNumber))
    .execute();
}

/** The ignored dust on each of these addresses, in micro-USDT (addresses without any are left out). */
export async function ignoredDustOfAddresses(
  db: Executor<CryptoReceivingTables>,
  addresses: readonly string[],
): Promise<Map<string, bigint>> {
  if (addresses.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_ignored_deposits')
    .select((eb) => ['address', eb.fn.sum<string>('amount_micro').as('total')])
    .where('address', 'in', addresses)
    .groupBy('address')
    .execute();
  return new Map(rows.map((row) => [row.address, BigInt(row.total)]));
}

/** USDT of the deposits credited from blocks above `blockNumber` (custody reconciliation). */
export async function sumCreditedAboveBlock(
  db: Executor<CryptoReceivingTables>,
  chain: ChainName,
  blockNumber: number,
): Promise<bigint> {
  const row = await db
    .selectFrom('crypto_deposits')
    .select(sql<bigint>`coalesce(sum(amount_micro), 0)::int8`.as('amount'))
    .where('chain', '=', chain)
    .where('status', '=', 'credited')
    .where('block_number', '>', BigInt(blockNumber))
    .executeTakeFirstOrThrow();
  return row.amount;
}

// ---- the watcher's cursor, lease and scanned blocks ----

export async function findCursor(
  db: Executor<CryptoReceivingTables>,
  chain: ChainName,
): Promise<CursorRow | undefined> {
  return db.selectFrom('crypto_chain_cursors').selectAll().where('chain', '=', chain).executeTakeFirst();
}

/** The first watcher of a chain starts its cursor (a concurrent first watcher's row wins). */
export async function insertCursorIfMissing(
  db: Executor<CryptoReceivingTables>,
  row: Insertable<CryptoReceivingTables['crypto_chain_cursors']>,
): Promise<void> {
  await db
    .insertInto('crypto_chain_cursors')
    .values(row)
    .onConflict((conflict) => conflict.column('chain').doNothing())
    .execute();
}

/** Takes or renews the lease; true when this token holds it until `until`. */
export async function takeLease(
  db: Executor<CryptoReceivingTables>,
  chain: ChainName,
  token: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  return takeRowLease(db, 'crypto_chain_cursors', { chain, token, now, until });
}

export async function releaseLease(
  db: Executor<CryptoReceivingTables>,
  chain: ChainName,
  token: string,
): Promise<void> {
  await releaseRowLease(db, 'crypto_chain_cursors', chain, token);
}

/**
 * Moves the cursor from where this leader last saw it; false (nothing moved) when another
 * watcher took over or moved it meanwhile. The caller's transaction then rolls back.
 */
export async function advanceCursor(
  tx: Tx<CryptoReceivingTables>,
  chain: ChainName,
  token: string,
  from: { blockNumber: number; blockId: string },
  to: { blockNumber: number; blockId: string },
  at: Date,
): Promise<boolean> {
  const row = await tx
    .updateTable('crypto_chain_cursors')
    .set({ block_number: BigInt(to.blockNumber), block_id: to.blockId, updated_at: at })
    .where('chain', '=', chain)
    .where('leader_token', '=', token)
    .where('block_number', '=', BigInt(from.blockNumber))
    .where('block_id', '=', from.blockId)
    .returning('chain')
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertScannedBlocks(
  tx: Tx<CryptoReceivingTables>,
  chain: ChainName,
  blocks: readonly { number: number; id: string }[],
): Promise<void> {
  if (blocks.length === 0) return;
  await tx
    .insertInto('crypto_scanned_blocks')
    .values(blocks.map((block) => ({ chain, block_number: BigInt(block.number), block_id: block.id })))
    .onConflict((conflict) =>
      conflict.columns(['chain', 'block_number']).doUpdateSet((eb) => ({ block_id: eb.ref('excluded.block_id') })),
    )
    .execute();
}

export async function scannedBlockId(
  db: Executor<CryptoReceivingTables>,
  chain: ChainName,
  blockNumber: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('crypto_scanned_blocks')
    .select('block_id')
    .where('chain', '=', chain)
    .where('block_number', '=', BigInt(blockNumber))
    .executeTakeFirst();
  return row?.block_id;
}

export async function deleteScannedBlocks(
  tx: Tx<CryptoReceivingTables>,
  chain: ChainName,
  options: { above?: number; below?: number },
): Promise<void> {
  let query = tx.deleteFrom('crypto_scanned_blocks').where('chain', '=', chain);
  if (options.above !== undefined) query = query.where('block_number', '>', BigInt(options.above));
  if (options.below !== undefined) query = query.where('block_number', '<', BigInt(options.below));
  await query.execute();
}

/** The earliest expires_at of an open invoice after `now`. */
export async function nextInvoiceExpiry(db: Executor<CryptoReceivingTables>, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('crypto_invoices')
    .select('expires_at')
    .where('status', 'in', ['pending', 'confirming'])
    .where('expires_at', '>', now)
    .orderBy('expires_at')
    .limit(1)
    .executeTakeFirst();
  return row?.expires_at;
}

// ---- settlement in sets (one transaction per batch of final deposits) ----

/** These deposits that are still confirming, locked until the transaction ends, in id order (one lock order for every batch). */
export async function lockConfirmingDeposits(
  tx: Tx<CryptoReceivingTables>,
  depositIds: readonly string[],
): Promise<DepositRow[]> {
  if (depositIds.length === 0) return [];
  return tx
    .selectFrom('crypto_deposits')
    .selectAll()
    .where(anyOf('id', depositIds))
    .where('status', '=', 'confirming')
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function lockInvoices(
  tx: Tx<CryptoReceivingTables>,
  invoiceIds: readonly string[],
): Promise<InvoiceRow[]> {
  if (invoiceIds.length === 0) return [];
  return tx
    .selectFrom('crypto_invoices')
    .selectAll()
    .where(anyOf('id', invoiceIds))
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function lockWallets(tx: Tx<CryptoReceivingTables>, walletIds: readonly string[]): Promise<WalletRow[]> {
  if (walletIds.length === 0) return [];
  return tx.selectFrom('crypto_wallets').selectAll().where(anyOf('id', walletIds)).orderBy('id').forUpdate().execute();
}

/**
 * Each locked deposit's final status (credited or held) at `at`, in one statement; returns
 * the rows of those that were still confirming, as written. The caller holds their row
 * locks, so the rows it read are current: only the ids come back.
 */
export async function finishDeposits(
  tx: Tx<CryptoReceivingTables>,
  finishes: readonly { deposit: DepositRow; status: Extract<DepositStatus, 'credited' | 'held'> }[],
  at: Date,
): Promise<DepositRow[]> {
  if (finishes.length === 0) return [];
  const result = await sql<{ id: string }>`
    update crypto_deposits as d set status = v.status, final_at = ${at.toISOString()}::timestamptz
      from unnest(${finishes.map((finish) => finish.deposit.id)}::text[], ${finishes.map((finish) => finish.status)}::text[]) as v(id, status)
     where d.id = v.id and d.status = 'confirming'
    returning d.id`.execute(tx);
  const finished = new Set(result.rows.map((row) => row.id));
  const finals = finishes
    .filter((finish) => finished.has(finish.deposit.id))
    .map((finish) => ({ ...finish.deposit, status: finish.status, final_at: at }));
  await addFinalUsdt(tx, finals);
  return finals;
}

/**
 * Adds deposits that just became final to their addresses' running totals, in the
 * transaction that made them final. The addresses are locked in address order first:
 * two settlements sharing addresses then wait for each other instead of deadlocking.
 */
export async function addFinalUsdt(
  tx: Tx<CryptoReceivingTables>,
  deposits: readonly Pick<DepositRow, 'address' | 'amount_micro'>[],
): Promise<void> {
  const totals = new Map<string, bigint>();
  for (const deposit of deposits)
    totals.set(deposit.address, (totals.get(deposit.address) ?? 0n) + deposit.amount_micro);
  if (totals.size === 0) return;
  const addresses = [...totals.keys()].sort();
  await sql`select 1 from crypto_addresses where address = any(${addresses}::text[]) order by address for update`.execute(
    tx,
  );
  await sql`
    update crypto_addresses as a set final_usdt_micro = a.final_usdt_micro + v.amount
      from unnest(${addresses}::text[], ${addresses.map((address) => totals.get(address)!.toString())}::int8[]) as v(address, amount)
     where a.address = v.address`.execute(tx);
}

/** Adds what a completed sweep moved off the address to its running total, in the transaction that completes it. */
export async function addSweptUsdt(tx: Tx<CryptoReceivingTables>, address: string, amountMicro: bigint): Promise<void> {
  const result = await tx
    .updateTable('crypto_addresses')
    .set((eb) => ({ swept_usdt_micro: eb('swept_usdt_micro', '+', amountMicro) }))
    .where('address', '=', address)
    .executeTakeFirst();
  if (result.numUpdatedRows !== 1n) throw new Error(`swept USDT from ${address}, which is not a deposit address`);
}

/** The underpaid tolerance of each of these shops (0 when not set). */
export async function underpaidTolerances(
  db: Executor<CryptoReceivingTables>,
  shopIds: readonly string[],
): Promise<Map<string, number>> {
  const tolerances = new Map(shopIds.map((id) => [id, 0]));
  if (shopIds.length === 0) return tolerances;
  const rows = await db
    .selectFrom('crypto_shop_settings')
    .select(['shop_id', 'underpaid_tolerance_bps'])
    .where('shop_id', 'in', [...shopIds])
    .execute();
  for (const row of rows) tolerances.set(row.shop_id, row.underpaid_tolerance_bps);
  return tolerances;
}

/** How many deposits of each invoice are still confirming. */
export async function confirmingCountsOfInvoices(
  db: Executor<CryptoReceivingTables>,
  invoiceIds: readonly string[],
): Promise<Map<string, number>> {
  const counts = new Map(invoiceIds.map((id) => [id, 0]));
  if (invoiceIds.length === 0) return counts;
  const rows = await db
    .selectFrom('crypto_deposits')
    .select(['invoice_id', (eb) => eb.fn.countAll<string>().as('count')])
    .where(anyOf('invoice_id', invoiceIds))
    .where('status', '=', 'confirming')
    .groupBy('invoice_id')
    .execute();
  for (const row of rows) counts.set(row.invoice_id!, Number(row.count));
  return counts;
}

/** Each invoice's new status, paid amount and paid_at in one statement; returns the rows as written. */
export async function updateInvoices(
  tx: Tx<CryptoReceivingTables>,
  changes: readonly { id: string; status: InvoiceStatus; paidMicro: bigint; paidAt: Date | null }[],
  at: Date,
): Promise<InvoiceRow[]> {
  if (changes.length === 0) return [];
  const result = await sql<InvoiceRow>`
    update crypto_invoices as i set status = v.status, paid_micro = v.paid_micro, paid_at = v.paid_at, updated_at = ${at.toISOString()}::timestamptz
      from unnest(${changes.map((change) => change.id)}::text[], ${changes.map((change) => change.status)}::text[],
        ${changes.map((change) => change.paidMicro.toString())}::int8[], ${changes.map((change) => change.paidAt?.toISOString() ?? null)}::timestamptz[])
        as v(id, status, paid_micro, paid_at)
     where i.id = v.id
    returning i.*`.execute(tx);
  return result.rows;
}

// ---- the address pool (address-pool.ts) ----

/** How many addresses of this key wait in the pool. */
export async function countPooledAddresses(
  db: Executor<CryptoReceivingTables>,
  keyId: AddressKeyId,
  keyFingerprint: string,
): Promise<number> {
  const row = await db
    .selectFrom('crypto_address_pool')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('key_id', '=', keyId)
    .where('key_fingerprint', '=', keyFingerprint)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Takes `count` consecutive derivation indexes at once; returns the first. Commits on its own, like takeNextIndex. */
export async function takeIndexBlock(
  db: Executor<CryptoReceivingTables>,
  keyId: AddressKeyId,
  count: number,
): Promise<number> {
  const row = await db
    .updateTable('crypto_address_counters')
    .set((eb) => ({ next_index: eb('next_index', '+', BigInt(count)) }))
    .where('key_id', '=', keyId)
    .returning('next_index')
    .executeTakeFirstOrThrow();
  return Number(row.next_index) - count;
}

export async function insertPooledAddresses(
  db: Executor<CryptoReceivingTables>,
  rows: readonly Insertable<CryptoReceivingTables['crypto_address_pool']>[],
): Promise<void> {
  if (rows.length > 0)
    await db
      .insertInto('crypto_address_pool')
      .values([...rows])
      .execute();
}

/**
 * Takes up to `count` pooled addresses of this key out of the pool for good
 * (lowest indexes first; rows another claim holds are skipped, not waited for).
 */
export async function claimPooledAddresses(
  db: Executor<CryptoReceivingTables>,
  keyId: AddressKeyId,
  keyFingerprint: string,
  count: number,
): Promise<{ derivation_index: bigint; address: string }[]> {
  const result = await sql<{ derivation_index: bigint; address: string }>`
    delete from crypto_address_pool
     where key_id = ${keyId} and derivation_index in (
       select derivation_index from crypto_address_pool
        where key_id = ${keyId} and key_fingerprint = ${keyFingerprint}
        order by derivation_index
        limit ${count}
        for update skip locked)
    returning derivation_index, address`.execute(db);
  return result.rows;
}

/** A deposit address of a key, from the pool or derived just now. */
export interface KeyedAddress {
  readonly keyId: AddressKeyId;
  readonly index: number;
  readonly address: string;
}

/**
 * An invoice, its address and its idempotency record in ONE statement (one round
 * trip, one commit): the address recorded with its shop, the invoice on it, the
 * record naming the invoice. A record already there for the key fails the whole
 * statement with a unique violation.
 */
export async function insertInvoiceWithAddress(
  db: Executor<CryptoReceivingTables>,
  source: KeyedAddress,
  invoice: Omit<Insertable<CryptoReceivingTables['crypto_invoices']>, 'address' | 'paid_micro'>,
  record: NewIdempotencyRecord,
): Promise<InvoiceRow> {
  const result = await sql<InvoiceRow>`
    with address as (
      insert into crypto_addresses (address, key_id, derivation_index, shop_id, purpose, created_at)
      values (${source.address}, ${source.keyId}, ${BigInt(source.index)}, ${invoice.shop_id}, 'invoice', ${invoice.created_at})
      returning address
    ),
    invoice as (
      insert into crypto_invoices (id, shop_id, external_id, network, network_mode, amount_micro, address, status, lifetime_s, callback_url, expires_at, paid_at, created_at, updated_at)
      select ${invoice.id}::text, ${invoice.shop_id}::text, ${invoice.external_id}::text, ${invoice.network}::text, ${invoice.network_mode}::text, ${invoice.amount_micro}::int8, address,
             ${invoice.status}::text, ${invoice.lifetime_s}::int4, ${invoice.callback_url}::text, ${invoice.expires_at}::timestamptz,
             ${invoice.paid_at ?? null}::timestamptz, ${invoice.created_at}::timestamptz, ${invoice.updated_at}::timestamptz
        from address
      returning *
    ),
    record as (${recordsInsertFrom([record], { cte: 'invoice', column: 'id' })})
    select * from invoice`.execute(db);
  const row = result.rows[0];
  if (!row) throw new Error('an invoice insert returned no row');
  return row;
}
