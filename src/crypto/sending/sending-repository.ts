// SQL of the sign-once executor: outgoing transfers, their signed attempts, and
// the executor's lease per chain.
import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import { joinAnchor, type CteAnchor } from '../../db/statement-anchor.ts';
import { releaseRowLease, takeRowLease } from '../../db/row-lease.ts';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { EnergyPlan, EnergySource } from '../energy/energy-sources.ts';
import type { AttemptStatus, ChainName, OutgoingErrorCode, OutgoingPurpose, SendingTables } from './sending-tables.ts';

export type OutgoingTransferRow = Selectable<SendingTables['crypto_outgoing_transfers']>;
export type OutgoingAttemptRow = Selectable<SendingTables['crypto_outgoing_attempts']>;

export async function insertTransfer(
  tx: Tx<SendingTables>,
  row: Insertable<SendingTables['crypto_outgoing_transfers']>,
): Promise<OutgoingTransferRow> {
  return tx.insertInto('crypto_outgoing_transfers').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Many queued transfers in one INSERT (a batch's items), returned in the order given. */
export async function insertTransfers(
  tx: Tx<SendingTables>,
  rows: readonly Insertable<SendingTables['crypto_outgoing_transfers']>[],
): Promise<OutgoingTransferRow[]> {
  const inserted: OutgoingTransferRow[] = [];
  // 21 parameters a row: chunks stay far below PostgreSQL's 65,535 per statement.
  for (let start = 0; start < rows.length; start += 1_000) {
    inserted.push(
      ...(await tx
        .insertInto('crypto_outgoing_transfers')
        .values(rows.slice(start, start + 1_000))
        .returningAll()
        .execute()),
    );
  }
  const byId = new Map(inserted.map((row) => [row.id, row]));
  return rows.map((row) => byId.get(row.id)!);
}

/**
 * Queued transfers as a data-modifying CTE's statement (`returning id`), each
 * inserted only when its `anchorKey` is in the anchor CTE of the same statement.
 */
export function queuedTransfersInsertFrom(
  rows: readonly (QueuedTransferRow & { readonly anchorKey: string })[],
  anchor: CteAnchor,
): RawBuilder<unknown> {
  const column = <T>(pick: (row: QueuedTransferRow) => T) => rows.map(pick);
  return sql`insert into crypto_outgoing_transfers (id, chain, purpose, owner_id, asset, from_kind, from_address, from_derivation_index, to_address,
      amount, status, tx_id, fee_sun, block_number, error_code, error_message, short_of_funds_since, created_at, updated_at, submitted_at, final_at)
    select t.id, t.chain, t.purpose, t.owner_id, t.asset, t.from_kind, t.from_address, t.from_derivation_index, t.to_address, t.amount,
           'queued', null, null, null, null, null, null, t.created_at, t.created_at, null, null
      from unnest(${column((r) => r.id)}::text[], ${column((r) => r.chain)}::text[], ${column((r) => r.purpose)}::text[], ${column((r) => r.owner_id)}::text[],
                  ${column((r) => r.asset)}::text[], ${column((r) => r.from_kind)}::text[], ${column((r) => r.from_address)}::text[],
                  ${column((r) => r.from_derivation_index?.toString() ?? null)}::int8[], ${column((r) => r.to_address)}::text[], ${column((r) => r.amount.toString())}::int8[],
                  ${column((r) => r.created_at.toISOString())}::timestamptz[], ${rows.map((row) => row.anchorKey)}::text[])
             with ordinality as t(id, chain, purpose, owner_id, asset, from_kind, from_address, from_derivation_index, to_address, amount, created_at, anchor_key, position)
      ${joinAnchor(anchor, sql.ref('t.anchor_key'))}
     order by t.position
    returning id`;
}

/** What a queued transfer's row holds beyond its constant columns (status queued, no tx, updated when created). */
export interface QueuedTransferRow {
  readonly id: string;
  readonly chain: string;
  readonly purpose: string;
  readonly owner_id: string;
  readonly asset: string;
  readonly from_kind: string;
  readonly from_address: string | null;
  readonly from_derivation_index: bigint | null;
  readonly to_address: string;
  readonly amount: bigint;
  readonly created_at: Date;
}

export async function findTransfer(db: Executor<SendingTables>, id: string): Promise<OutgoingTransferRow | undefined> {
  return db.selectFrom('crypto_outgoing_transfers').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Values per IN list: a statement stays far below PostgreSQL's 65,535 parameters. */
const LOOKUP_CHUNK = 5_000;

async function inChunks<V, R>(values: readonly V[], lookup: (chunk: V[]) => Promise<R[]>): Promise<R[]> {
  const rows: R[] = [];
  for (let start = 0; start < values.length; start += LOOKUP_CHUNK)
    rows.push(...(await lookup(values.slice(start, start + LOOKUP_CHUNK))));
  return rows;
}

// ---- the executor's lease and scan position ----

export async function ensureLeaseRow(db: Executor<SendingTables>, chain: ChainName, now: Date): Promise<void> {
  await db
    .insertInto('crypto_sending_leases')
    .values({ chain, leader_token: null, lease_until: null, scanned_block: null, updated_at: now })
    .onConflict((conflict) => conflict.column('chain').doNothing())
    .execute();
}

/** Takes or renews the lease; true when this token holds it until `until`. */
export async function takeLease(
  db: Executor<SendingTables>,
  chain: ChainName,
  token: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  return takeRowLease(db, 'crypto_sending_leases', { chain, token, now, until }, true);
}

export async function releaseLease(db: Executor<SendingTables>, chain: ChainName, token: string): Promise<void> {
  await releaseRowLease(db, 'crypto_sending_leases', chain, token);
}

export async function findLease(
  db: Executor<SendingTables>,
  chain: ChainName,
): Promise<Selectable<SendingTables['crypto_sending_leases']> | undefined> {
  return db.selectFrom('crypto_sending_leases').selectAll().where('chain', '=', chain).executeTakeFirst();
}

/** Moves the scan position, only while this token leads. */
export async function setScannedBlock(
  db: Executor<SendingTables>,
  chain: ChainName,
  token: string,
  block: number,
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('crypto_sending_leases')
    .set({ scanned_block: BigInt(block), updated_at: now })
    .where('chain', '=', chain)
    .where('leader_token', '=', token)
    .returning('chain')
    .executeTakeFirst();
  return row !== undefined;
}

// ---- the queues ----

/**
 * Queued transfers never signed (or whose last attempt was proven dead), oldest first; one the key could not
 * sign is left out (it holds no slot) until its check is older than `unsignableRecheckBefore`.
 */
export async function queuedUnsigned(
  db: Executor<SendingTables>,
  chain: ChainName,
  purposes: readonly string[],
  limit: number,
  unsignableRecheckBefore: Date,
): Promise<OutgoingTransferRow[]> {
  if (purposes.length === 0 || limit <= 0) return [];
  return db
    .selectFrom('crypto_outgoing_transfers')
    .selectAll()
    .where('chain', '=', chain)
    .where('status', '=', 'queued')
    .where('tx_id', 'is', null)
    .where('purpose', 'in', purposes as OutgoingPurpose[])
    .where((eb) =>
      eb.or([eb('unsignable_checked_at', 'is', null), eb('unsignable_checked_at', '<=', unsignableRecheckBefore)]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Transfers signed and not final, with their current attempt (its bytes apart: signedHexOf, for the few
 * that need them). Two reads, each through its own index, joined here: as one statement joining both
 * tables it was planned on statistics that had seen no transfer in flight (a table of millions of final
 * ones is not re-analyzed for a few thousand new rows), and its nested loop read every pending attempt
 * once per transfer in flight: 0.7 s a pass with 1,600 in flight among 3,000,000 transfers. A transfer
 * whose attempt stops being pending between the two reads is left out: it is no longer in flight.
 */
export async function inFlight(
  db: Executor<SendingTables>,
  chain: ChainName,
): Promise<(OutgoingTransferRow & { attempt_expiration: Date; attempt_last_broadcast: string | null })[]> {
  const transfers = await db
    .selectFrom('crypto_outgoing_transfers')
    .selectAll()
    .where('chain', '=', chain)
    .where('status', 'in', ['queued', 'submitted'])
    .where('tx_id', 'is not', null)
    .execute();
  if (transfers.length === 0) return [];
  const attempts = await inChunks(
    transfers.map((transfer) => transfer.tx_id!),
    (chunk) =>
      db
        .selectFrom('crypto_outgoing_attempts')
        .select(['tx_id', 'transfer_id', 'expiration', 'last_broadcast'])
        .where(sql<boolean>`tx_id = any(${chunk}::text[])`)
        .where('status', '=', 'pending')
        .execute(),
  );
  const byTxId = new Map(attempts.map((attempt) => [attempt.tx_id, attempt]));
  return transfers.flatMap((transfer) => {
    const attempt = byTxId.get(transfer.tx_id!);
    return attempt && attempt.transfer_id === transfer.id
      ? [{ ...transfer, attempt_expiration: attempt.expiration, attempt_last_broadcast: attempt.last_broadcast }]
      : [];
  });
}

/** The signed bytes of these attempts, by txID (re-broadcasts send exactly them). */
export async function signedHexOf(db: Executor<SendingTables>, txIds: readonly string[]): Promise<Map<string, string>> {
  if (txIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_outgoing_attempts')
    .select(['tx_id', 'signed_hex'])
    .where(sql<boolean>`tx_id = any(${[...txIds]}::text[])`)
    .execute();
  return new Map(rows.map((row) => [row.tx_id, row.signed_hex]));
}

export async function countInFlight(db: Executor<SendingTables>, chain: ChainName): Promise<number> {
  const row = await db
    .selectFrom('crypto_outgoing_transfers')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('chain', '=', chain)
    .where('status', 'in', ['queued', 'submitted'])
    .where('tx_id', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The lowest TaPoS block of the attempts that may still land: where the result scan must start. */
export async function lowestPendingReference(
  db: Executor<SendingTables>,
  chain: ChainName,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('crypto_outgoing_attempts as a')
    .innerJoin('crypto_outgoing_transfers as t', 't.id', 'a.transfer_id')
    .select((eb) => eb.fn.min('a.ref_block_number').as('low'))
    .where('t.chain', '=', chain)
    .where('a.status', '=', 'pending')
    .executeTakeFirst();
  return row?.low === null || row?.low === undefined ? undefined : Number(row.low);
}

/** Which of these txIDs are pending attempts of this chain. */
export async function pendingAttemptsByTxId(
  db: Executor<SendingTables>,
  chain: ChainName,
  txIds: readonly string[],
): Promise<OutgoingAttemptRow[]> {
  return inChunks(txIds, (chunk) =>
    db
      .selectFrom('crypto_outgoing_attempts as a')
      .innerJoin('crypto_outgoing_transfers as t', 't.id', 'a.transfer_id')
      .selectAll('a')
      .where('t.chain', '=', chain)
      .where('a.tx_id', 'in', chunk)
      .where('a.status', '=', 'pending')
      .execute(),
  );
}

export async function attemptsOf(db: Executor<SendingTables>, transferId: string): Promise<OutgoingAttemptRow[]> {
  return db
    .selectFrom('crypto_outgoing_attempts')
    .selectAll()
    .where('transfer_id', '=', transferId)
    .orderBy('attempt')
    .execute();
}

// ---- state changes ----

export async function lockTransfer(tx: Tx<SendingTables>, id: string): Promise<OutgoingTransferRow | undefined> {
  return tx.selectFrom('crypto_outgoing_transfers').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function setShortOfFunds(db: Executor<SendingTables>, ids: readonly string[], since: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('crypto_outgoing_transfers')
    .set({ short_of_funds_since: since })
    .where('id', 'in', ids)
    .where('short_of_funds_since', 'is', null)
    .execute();
}

/** Marks transfers held because they would burn more TRX than the cap allows (the first sighting is kept). */
export async function setAboveBurnCap(db: Executor<SendingTables>, ids: readonly string[], since: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('crypto_outgoing_transfers')
    .set({ above_burn_cap_since: since })
    .where('id', 'in', ids)
    .where('above_burn_cap_since', 'is', null)
    .execute();
}

/** Marks transfers the signing key cannot sign as checked now: passes skip them until their recheck is due. */
export async function setUnsignable(db: Executor<SendingTables>, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('crypto_outgoing_transfers')
    .set({ unsignable_checked_at: now })
    .where('id', 'in', ids)
    .where('status', '=', 'queued')
    .where('tx_id', 'is', null)
    .execute();
}

/** Every attempt proven dead: back to queued without a txID, for a new attempt. */
export async function requeue(tx: Tx<SendingTables>, id: string, now: Date): Promise<void> {
  await tx
    .updateTable('crypto_outgoing_transfers')
    .set({ status: 'queued', tx_id: null, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Whether the chain has transfers not final yet (a gateway that never sends starts no chain for it). */
export async function hasOpenTransfers(
  db: Executor<SendingTables>,
  chain: ChainName,
): Promise<{ queuedUnsigned: boolean; inFlight: boolean }> {
  const rows = await db
    .selectFrom('crypto_outgoing_transfers')
    .select(['status', 'tx_id'])
    .where('chain', '=', chain)
    .where('status', 'in', ['queued', 'submitted'])
    .limit(50)
    .execute();
  return {
    queuedUnsigned: rows.some((row) => row.status === 'queued' && row.tx_id === null),
    inFlight: rows.some((row) => row.tx_id !== null),
  };
}

// ---- batched forms (the executor handles thousands of transfers a pass) ----

/** Records the answers of many broadcasts: one statement per distinct answer. */
export async function recordBroadcasts(
  db: Executor<SendingTables>,
  answers: readonly { readonly txId: string; readonly answer: string }[],
  now: Date,
): Promise<void> {
  const byAnswer = new Map<string, string[]>();
  for (const { txId, answer } of answers)
    byAnswer.set(answer.slice(0, 200), [...(byAnswer.get(answer.slice(0, 200)) ?? []), txId]);
  for (const [answer, txIds] of byAnswer) {
    for (let start = 0; start < txIds.length; start += LOOKUP_CHUNK) {
      await db
        .updateTable('crypto_outgoing_attempts')
        .set((eb) => ({ broadcasts: eb('broadcasts', '+', 1), last_broadcast: answer, last_broadcast_at: now }))
        .where('tx_id', 'in', txIds.slice(start, start + LOOKUP_CHUNK))
        .execute();
    }
  }
}

/** queued (with these txIDs) → submitted; the rows that changed, as they are now. */
export async function markSubmittedMany(
  tx: Tx<SendingTables>,
  items: readonly { readonly id: string; readonly txId: string }[],
  now: Date,
): Promise<OutgoingTransferRow[]> {
  if (items.length === 0) return [];
  // (id, tx_id): a transfer re-signed meanwhile carries another txID, and this answer is not about it.
  return tx
    .updateTable('crypto_outgoing_transfers')
    .set({ status: 'submitted', submitted_at: now, updated_at: now })
    .where((eb) =>
      eb(
        eb.refTuple('id', 'tx_id'),
        'in',
        items.map((item) => eb.tuple(item.id, item.txId)),
      ),
    )
    .where('status', '=', 'queued')
    .returningAll()
    .execute();
}

/** Locks many transfers (id order, so two lockers cannot deadlock). */
export async function lockTransfers(tx: Tx<SendingTables>, ids: readonly string[]): Promise<OutgoingTransferRow[]> {
  if (ids.length === 0) return [];
  return tx
    .selectFrom('crypto_outgoing_transfers')
    .selectAll()
    .where('id', 'in', [...ids])
    .orderBy('id')
    .forUpdate()
    .execute();
}

export interface FinishedFields {
  readonly id: string;
  readonly status: 'confirmed' | 'failed';
  readonly txId: string | null;
  readonly feeSun: bigint | null;
  readonly blockNumber: bigint | null;
  readonly errorCode: OutgoingErrorCode | null;
  readonly errorMessage: string | null;
  readonly submittedAt: Date | null;
  readonly costs: TransferCosts | null;
}

/** What a landed transfer cost, from its receipt (migration 0048). */
export interface TransferCosts {
  readonly energyUsed: bigint;
  readonly energyOwn: bigint;
  readonly energyFeeSun: bigint;
  readonly bandwidthUsed: bigint;
  readonly bandwidthFeeSun: bigint;
  readonly energySource: EnergySource | null;
  readonly costMicro: bigint;
}

/** Finishes many transfers in one statement (UPDATE … FROM VALUES); returns them as they are now. */
export async function finishTransfers(
  tx: Tx<SendingTables>,
  rows: readonly FinishedFields[],
  now: Date,
): Promise<OutgoingTransferRow[]> {
  if (rows.length === 0) return [];
  const values = sql.join(
    rows.map(
      (row) =>
        sql`(${row.id}, ${row.status}, ${row.txId}, ${row.feeSun}::int8, ${row.blockNumber}::int8, ${row.errorCode}, ${row.errorMessage}, ${row.submittedAt}::timestamptz,
             ${row.costs?.energyUsed ?? null}::int8, ${row.costs?.energyOwn ?? null}::int8, ${row.costs?.energyFeeSun ?? null}::int8,
             ${row.costs?.bandwidthUsed ?? null}::int8, ${row.costs?.bandwidthFeeSun ?? null}::int8, ${row.costs?.energySource ?? null}::text,
             ${row.costs?.costMicro ?? null}::int8)`,
    ),
  );
  const result = await sql<OutgoingTransferRow>`
    update crypto_outgoing_transfers as t
       set status = v.status, tx_id = coalesce(v.tx_id, t.tx_id), fee_sun = v.fee_sun, block_number = v.block_number,
           error_code = v.error_code, error_message = v.error_message, submitted_at = coalesce(t.submitted_at, v.submitted_at),
           energy_used = v.energy_used, energy_own = v.energy_own, energy_fee_sun = v.energy_fee_sun,
           bandwidth_used = v.bandwidth_used, bandwidth_fee_sun = v.bandwidth_fee_sun, energy_source = v.energy_source,
           cost_micro = v.cost_micro, above_burn_cap_since = null, unsignable_checked_at = null,
           final_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
      from (values ${values}) as v(id, status, tx_id, fee_sun, block_number, error_code, error_message, submitted_at,
                                   energy_used, energy_own, energy_fee_sun, bandwidth_used, bandwidth_fee_sun, energy_source, cost_micro)
     where t.id = v.id and t.status in ('queued', 'submitted')
    returning t.*`.execute(tx);
  return result.rows;
}

/** Sets the status of these attempts (a tx_id names one attempt). */
export async function setAttemptsStatus(
  tx: Tx<SendingTables>,
  txIds: readonly string[],
  status: AttemptStatus,
): Promise<void> {
  if (txIds.length === 0) return;
  await tx
    .updateTable('crypto_outgoing_attempts')
    .set({ status })
    .where('tx_id', 'in', [...txIds])
    .execute();
}

/**
 * Claims the next attempt number of many queued, unsigned transfers and sets their txIDs
 * (one UPDATE … FROM VALUES, each row only if it is still queued, unsigned and at the
 * attempt count the signer saw), then inserts those attempts; returns the ids claimed.
 */
export async function recordSignedAttempts(
  tx: Tx<SendingTables>,
  items: readonly {
    readonly id: string;
    readonly attempts: number;
    readonly txId: string;
    readonly signedHex: string;
    readonly feeLimitSun: bigint;
    /** The source the energy manager arranged for this attempt (null: a transfer that uses no energy), and what its rentals cost. */
    readonly energyPlan: EnergyPlan | null;
    readonly rentalSun: bigint | null;
  }[],
  attempt: { readonly expiration: Date; readonly refBlockNumber: number; readonly signedAt: Date },
): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const values = sql.join(
    items.map(
      (item) =>
        sql`(${item.id}, ${item.attempts}::int4, ${item.txId}, ${item.energyPlan}::text, ${item.rentalSun}::int8)`,
    ),
  );
  // rental_sun is every rental placed for the transfer so far (the energy manager sums them): a rental
  // bought for an attempt that expired stays counted, the energy was paid for either way.
  const claimed = await sql<{ id: string }>`
    update crypto_outgoing_transfers as t
       set tx_id = v.tx_id, attempts = t.attempts + 1, short_of_funds_since = null, above_burn_cap_since = null,
           unsignable_checked_at = null,
           energy_plan = v.energy_plan, rental_sun = coalesce(v.rental_sun, t.rental_sun),
           updated_at = ${attempt.signedAt}::timestamptz
      from (values ${values}) as v(id, attempts, tx_id, energy_plan, rental_sun)
     where t.id = v.id and t.status = 'queued' and t.tx_id is null and t.attempts = v.attempts
    returning t.id`.execute(tx);
  const ids = new Set(claimed.rows.map((row) => row.id));
  const rows = items
    .filter((item) => ids.has(item.id))
    .map((item) => ({
      transfer_id: item.id,
      attempt: item.attempts + 1,
      tx_id: item.txId,
      signed_hex: item.signedHex,
      expiration: attempt.expiration,
      ref_block_number: BigInt(attempt.refBlockNumber),
      fee_limit_sun: item.feeLimitSun,
      status: 'pending' as const,
      signed_at: attempt.signedAt,
    }));
  for (let start = 0; start < rows.length; start += 1_000)
    await tx
      .insertInto('crypto_outgoing_attempts')
      .values(rows.slice(start, start + 1_000))
      .execute();
  return ids;
}

/** Those of `addresses` that some confirmed transfer of `chain` was sent to (migration 0028's index). */
export async function confirmedRecipients(
  db: Executor<SendingTables>,
  chain: ChainName,
  addresses: readonly string[],
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await db
    .selectFrom('crypto_outgoing_transfers')
    .select('to_address')
    .distinct()
    .where('chain', '=', chain)
    .where('status', '=', 'confirmed')
    .where('to_address', 'in', addresses)
    .execute();
  return new Set(rows.map((row) => row.to_address));
}

/**
 * USDT that left the hot wallet, or may have, with no ledger booking for it (custody reconciliation):
 * transfers signed and not final, and moves to the cold wallet that landed (still custody, never booked).
 * One statement, so a move that lands meanwhile is counted once.
 */
export async function sumHotWalletUsdtInFlight(db: Executor<SendingTables>, chain: ChainName): Promise<bigint> {
  const row = await db
    .selectFrom('crypto_outgoing_transfers')
    .select(sql<bigint>`coalesce(sum(amount), 0)::int8`.as('amount'))
    .where('chain', '=', chain)
    .where('asset', '=', 'USDT')
    .where('from_kind', '=', 'hot_wallet')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', ['queued', 'submitted']), eb('tx_id', 'is not', null)]),
        eb.and([eb('purpose', '=', 'cold_storage'), eb('status', '=', 'confirmed')]),
      ]),
    )
    .executeTakeFirstOrThrow();
  return row.amount;
}

/** What the final transfers of one chain cost on one UTC day (migration 0048's columns). */
export interface DailyCostRow {
  readonly chain: ChainName;
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  readonly transfers: bigint;
  readonly energy_used: bigint;
  readonly energy_own: bigint;
  readonly energy_staked: bigint;
  readonly energy_delegated: bigint;
  readonly energy_rented: bigint;
  readonly energy_burned_source: bigint;
  readonly energy_mixed: bigint;
  readonly energy_fee_sun: bigint;
  readonly bandwidth_used: bigint;
  readonly bandwidth_fee_sun: bigint;
  readonly rental_sun: bigint;
  readonly cost_micro: bigint;
}

/** Per chain and UTC day, the sums of the costs of transfers final in [from, to) (one index range read). */
export async function dailyCosts(db: Executor<SendingTables>, from: Date, to: Date): Promise<DailyCostRow[]> {
  const bySource = (source: string) =>
    sql<bigint>`coalesce(sum(energy_used) filter (where energy_source = ${source}), 0)::int8`;
  const result = await sql<DailyCostRow>`
    select chain, to_char(final_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int8 as transfers,
           coalesce(sum(energy_used), 0)::int8 as energy_used, coalesce(sum(energy_own), 0)::int8 as energy_own,
           ${bySource('staked')} as energy_staked, ${bySource('delegated')} as energy_delegated,
           ${bySource('rented')} as energy_rented, ${bySource('burned')} as energy_burned_source,
           ${bySource('mixed')} as energy_mixed,
           coalesce(sum(energy_fee_sun), 0)::int8 as energy_fee_sun, coalesce(sum(bandwidth_used), 0)::int8 as bandwidth_used,
           coalesce(sum(bandwidth_fee_sun), 0)::int8 as bandwidth_fee_sun, coalesce(sum(rental_sun), 0)::int8 as rental_sun,
           coalesce(sum(cost_micro), 0)::int8 as cost_micro
      from crypto_outgoing_transfers
     where final_at is not null and final_at >= ${from}::timestamptz and final_at < ${to}::timestamptz
       and cost_micro is not null
     group by chain, day
     order by day, chain`.execute(db);
  return result.rows;
}
