// SQL of sweeping: the attempts (crypto_sweeps), the sweeper's candidates and
// the custody view's sweep columns. Which USDT is final on an address decides a
// sweep: those deposits, addresses and the addresses' running USDT totals are
// receiving's, whose service hands out the SQL of its side (`depositSql`) so a
// read stays one statement, and is told what a completed sweep moved.
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { depositSql } from '../receiving/receiving-service.ts';
import type { SweepingTables, SweepStatus } from './sweeping-tables.ts';

/** Which HD key derived an address: 'sandbox' or 'live' (the shop mode of the same name). */
type AddressKeyId = ChainAccess['keyId'];

export type SweepRow = Selectable<SweepingTables['crypto_sweeps']>;
export type SweepPatch = Updateable<SweepingTables['crypto_sweeps']>;

/** The unique index that keeps one attempt per address in flight (migration 0022). */
export const ONE_IN_FLIGHT_INDEX = 'crypto_sweeps_one_in_flight_idx';

export interface SweepCandidate {
  readonly address: string;
  readonly derivation_index: bigint;
  /** Final deposits (credited + held) minus completed sweeps. */
  readonly unswept_final_micro: bigint;
}

export interface SweepRetryPolicy {
  /** Consecutive failed attempts after which an address is left alone (stuck). */
  readonly maxConsecutiveFailures: number;
  /** Pause after the first failure; doubles with each further one. */
  readonly firstRetryDelaySeconds: number;
}

/**
 * Addresses of a key whose final, unswept USDT reached the threshold, with no
 * attempt in flight nor energy being taken back from it (a new delegation
 * must not be sized on energy that is about to leave), fewer than the allowed consecutive failures, and past the
 * back-off of the last one. The addresses come from their running totals (only
 * those not swept clean); the failures are read only for addresses past the
 * threshold: they count from the last completed sweep, so they join after it.
 */
export async function findSweepCandidates(
  db: Executor<SweepingTables>,
  options: {
    readonly keyId: AddressKeyId;
    readonly thresholdMicro: bigint;
    readonly now: Date;
    readonly limit: number;
    readonly retry: SweepRetryPolicy;
  },
): Promise<SweepCandidate[]> {
  const { keyId, thresholdMicro, now, limit, retry } = options;
  const result = await sql<SweepCandidate>`
    select u.address, u.derivation_index, u.unswept_micro as unswept_final_micro
    from (${depositSql.unsweptAddresses(keyId)}) u
    left join lateral (
      select max(x.created_at) as last_completed_at
      from crypto_sweeps x where x.address = u.address and x.status = 'completed'
    ) c on true
    left join lateral (
      select count(*)::int4 as failures, max(x.final_at) as last_failed_at
      from crypto_sweeps x
      where x.address = u.address and x.status = 'failed' and not x.cleared and x.created_at > coalesce(c.last_completed_at, '-infinity'::timestamptz)
    ) fl on true
    where u.unswept_micro >= ${thresholdMicro}
      and not exists (select 1 from crypto_sweeps x where x.address = u.address and x.status in ('topping_up', 'delegating', 'ready', 'sweeping'))
      and not exists (select 1 from crypto_sweeps x where x.address = u.address and x.undelegation_status = 'pending')
      and fl.failures < ${retry.maxConsecutiveFailures}
      and (fl.failures = 0 or fl.last_failed_at + make_interval(secs => ${retry.firstRetryDelaySeconds}::float8 * power(2, fl.failures - 1)) <= ${now})
    order by u.address
    limit ${limit}
  `.execute(db);
  return result.rows;
}

/**
 * Final deposits (credited + held) of the address minus what its completed
 * sweeps moved: the most a sweep may take. Deposits not final yet are left out,
 * so USDT a reorganisation could still take back is never swept.
 */
export async function unsweptFinalMicro(db: Executor<SweepingTables>, address: string): Promise<bigint> {
  const result = await sql<{ unswept_final_micro: bigint }>`
    select t.unswept_micro as unswept_final_micro
    from ${depositSql.usdtTotalsOfAddresses([address])} t
  `.execute(db);
  return result.rows[0]?.unswept_final_micro ?? 0n;
}

export async function insertSweep(
  tx: Tx<SweepingTables>,
  row: Insertable<SweepingTables['crypto_sweeps']>,
): Promise<SweepRow> {
  return tx.insertInto('crypto_sweeps').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function lockSweep(tx: Tx<SweepingTables>, id: string): Promise<SweepRow | undefined> {
  return tx.selectFrom('crypto_sweeps').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Moves an attempt on from `from` (compare-and-set); undefined when it was not in that state. */
export async function updateSweep(
  tx: Tx<SweepingTables>,
  id: string,
  from: SweepStatus,
  patch: SweepPatch,
): Promise<SweepRow | undefined> {
  return tx
    .updateTable('crypto_sweeps')
    .set(patch)
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/** The USDT transfer's txID once the executor broadcast it. */
export async function updateSweepTxHash(tx: Tx<SweepingTables>, id: string, txHash: string, at: Date): Promise<void> {
  await tx
    .updateTable('crypto_sweeps')
    .set({ tx_hash: txHash, updated_at: at })
    .where('id', '=', id)
    .where('status', '=', 'sweeping')
    .execute();
}

/** Clears the address's uncleared failures (an operator's retry); returns how many. */
export async function clearFailures(tx: Tx<SweepingTables>, address: string, at: Date): Promise<number> {
  const rows = await tx
    .updateTable('crypto_sweeps')
    .set({ cleared: true, updated_at: at })
    .where('address', '=', address)
    .where('status', '=', 'failed')
    .where('cleared', '=', false)
    .returning('id')
    .execute();
  return rows.length;
}

/** The undelegation columns of an attempt (its sweep's own state is left as it is). */
export async function setUndelegation(
  tx: Tx<SweepingTables>,
  id: string,
  patch: Pick<
    SweepPatch,
    'undelegation_transfer_id' | 'undelegation_status' | 'undelegation_attempts' | 'undelegation_fee_sun' | 'updated_at'
  >,
): Promise<void> {
  await tx.updateTable('crypto_sweeps').set(patch).where('id', '=', id).execute();
}

/** Staked sun that attempts of a chain will delegate or are delegating and the chain may not show yet. */
export async function pendingDelegationSun(db: Executor<SweepingTables>, chain: ChainAccess['chain']): Promise<bigint> {
  const row = await db
    .selectFrom('crypto_sweeps')
    .select(sql<bigint>`coalesce(sum(delegated_sun), 0)::int8`.as('sun'))
    .where('chain', '=', chain)
    .where('status', 'in', ['topping_up', 'delegating'])
    .where('delegated_sun', 'is not', null)
    .executeTakeFirstOrThrow();
  return row.sun;
}

/** Attempts whose energy could not be taken back after every try, oldest first (the operator's to look at). */
export async function failedUndelegations(db: Executor<SweepingTables>, limit: number): Promise<SweepRow[]> {
  return db
    .selectFrom('crypto_sweeps')
    .selectAll()
    .where('undelegation_status', '=', 'failed')
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** An address's attempts whose undelegation failed, locked (an operator's retry sends it again). */
export async function lockFailedUndelegationsOf(tx: Tx<SweepingTables>, address: string): Promise<SweepRow[]> {
  return tx
    .selectFrom('crypto_sweeps')
    .selectAll()
    .where('address', '=', address)
    .where('undelegation_status', '=', 'failed')
    .forUpdate()
    .execute();
}

export interface ReadySweep {
  readonly id: string;
  readonly address: string;
  readonly key_id: AddressKeyId;
  readonly derivation_index: bigint;
}

/** Attempts whose top-up is final, oldest first. */
export async function findReadySweeps(
  db: Executor<SweepingTables>,
  limit: number,
): Promise<Pick<SweepRow, 'id' | 'address'>[]> {
  return db
    .selectFrom('crypto_sweeps')
    .select(['id', 'address'])
    .where('status', '=', 'ready')
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

export async function hasReadySweeps(db: Executor<SweepingTables>): Promise<boolean> {
  return (
    (await db.selectFrom('crypto_sweeps').select('id').where('status', '=', 'ready').limit(1).executeTakeFirst()) !==
    undefined
  );
}

export async function sweepsOfAddress(db: Executor<SweepingTables>, address: string): Promise<SweepRow[]> {
  return db
    .selectFrom('crypto_sweeps')
    .selectAll()
    .where('address', '=', address)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export interface AddressSweepState {
  readonly address: string;
  readonly final_micro: bigint;
  readonly swept_micro: bigint;
  readonly last_completed_at: Date | null;
  /** The attempt in flight, if any. */
  readonly in_flight_status: SweepStatus | null;
  readonly in_flight_amount_micro: bigint | null;
  readonly in_flight_unswept_final_micro: bigint | null;
  /** Failed attempts since the last completed one. */
  readonly failures: number;
  readonly last_failed_at: Date | null;
  readonly last_error_code: string | null;
  /** The oldest deposit that became final after the last completed sweep began. */
  readonly oldest_unswept_final_at: Date | null;
}

/** What the custody view shows of sweeping, for a page of addresses. */
export async function addressSweepStates(
  db: Executor<SweepingTables>,
  addresses: readonly string[],
): Promise<AddressSweepState[]> {
  if (addresses.length === 0) return [];
  const result = await sql<AddressSweepState>`
    select a.address, a.final_micro, a.swept_micro, s.last_completed_at,
      i.status as in_flight_status,
      i.amount_micro as in_flight_amount_micro,
      i.unswept_final_micro as in_flight_unswept_final_micro,
      coalesce(fl.failures, 0)::int4 as failures,
      fl.last_failed_at,
      (select x.error_code from crypto_sweeps x where x.address = a.address and x.status = 'failed' and not x.cleared order by x.created_at desc limit 1) as last_error_code,
      ${depositSql.oldestFinalDepositAfter(sql.ref('a.address'), sql`coalesce(s.last_completed_at, '-infinity'::timestamptz)`)} as oldest_unswept_final_at
    from ${depositSql.usdtTotalsOfAddresses(addresses)} a
    left join lateral (
      select max(x.created_at) as last_completed_at
      from crypto_sweeps x where x.address = a.address and x.status = 'completed'
    ) s on true
    left join lateral (
      select x.status, x.amount_micro, x.unswept_final_micro from crypto_sweeps x
      where x.address = a.address and x.status in ('topping_up', 'delegating', 'ready', 'sweeping')
    ) i on true
    left join lateral (
      select count(*)::int4 as failures, max(x.final_at) as last_failed_at
      from crypto_sweeps x
      where x.address = a.address and x.status = 'failed' and not x.cleared and x.created_at > coalesce(s.last_completed_at, '-infinity'::timestamptz)
    ) fl on true
  `.execute(db);
  return result.rows;
}

/**
 * A page of a key's addresses that should hold USDT: final deposits (credited or
 * held) not all swept, or a sweep in flight (custody reconciliation reads them).
 * Both are few rows of partial indexes, whatever the history.
 */
export async function addressesHoldingUsdt(
  db: Executor<SweepingTables>,
  options: { readonly keyId: AddressKeyId; readonly after: string | undefined; readonly limit: number },
): Promise<string[]> {
  const after = options.after ?? '';
  const result = await sql<{ address: string }>`
    select u.address from (${depositSql.unsweptAddresses(options.keyId)}) u where u.address > ${after}
    union
    select x.address from crypto_sweeps x
     where x.status in ('topping_up', 'delegating', 'ready', 'sweeping') and x.address > ${after}
       and ${depositSql.isAddressOfKey(sql.ref('x.address'), options.keyId)}
    order by address
    limit ${options.limit}
  `.execute(db);
  return result.rows.map((row) => row.address);
}

/** USDT the sweeps of a chain are moving right now: their transfer is built, not final. */
export async function sumSweepingUsdt(db: Executor<SweepingTables>, chain: ChainAccess['chain']): Promise<bigint> {
  const row = await db
    .selectFrom('crypto_sweeps')
    .select(sql<bigint>`coalesce(sum(amount_micro), 0)::int8`.as('amount'))
    .where('chain', '=', chain)
    .where('status', '=', 'sweeping')
    .executeTakeFirstOrThrow();
  return row.amount;
}
