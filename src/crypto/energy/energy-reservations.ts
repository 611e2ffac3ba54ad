// The hot wallet's own staked energy promised to quoted transfers
// (docs/payouts.md "The quoted network fee"). A payout is quoted without the
// energy part only when the energy it takes is free now and promised to no
// other transfer still queued or in flight; that promise is a reservation, held
// until its transfer is final. Claims are serialized per chain by an advisory
// lock held for one short transaction (a read of the live claims and one
// insert), not for the payout's own statement, which waits on merchants'
// balance rows and is shared by concurrent creations.
import { sql } from 'kysely';
import type { Clock } from '../../clock.ts';
import type { Database } from '../../db/schema.ts';
import { inTransaction, type Db, type Executor, type Tx } from '../../db/transaction.ts';
import type { ChainName } from '../chain/crypto-chain.ts';
import type { EnergyTables } from './energy-tables.ts';

/**
 * A claim whose transfer row does not exist (yet) counts this long: the creation that
 * claimed it writes its transfer within milliseconds or deletes the claim, so one
 * still missing after this belongs to a process that died between the two.
 */
const CLAIM_GRACE_MS = 5 * 60_000;

/** A claim holds while its transfer is not final: the only read of the executor's table, through the joined schema. */
type ReservationTables = EnergyTables & Pick<Database, 'crypto_outgoing_transfers'>;

export interface EnergyClaim {
  readonly transferId: string;
  readonly energy: bigint;
}

/** The claims that still hold: their transfer queued or in flight, or not yet written and within the grace. */
function liveClaims(db: Executor<ReservationTables>, chain: ChainName, now: Date) {
  return db
    .selectFrom('crypto_energy_reservations as r')
    .leftJoin('crypto_outgoing_transfers as t', 't.id', 'r.transfer_id')
    .where('r.chain', '=', chain)
    .where((eb) =>
      eb.or([
        eb('t.status', 'in', ['queued', 'submitted']),
        eb.and([eb('t.id', 'is', null), eb('r.created_at', '>', new Date(now.getTime() - CLAIM_GRACE_MS))]),
      ]),
    );
}

/** Own energy promised to transfers not yet final. */
export async function reservedEnergy(db: Executor<ReservationTables>, chain: ChainName, now: Date): Promise<bigint> {
  const row = await liveClaims(db, chain, now)
    .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint>('r.energy'), sql<bigint>`0`).as('energy'))
    .executeTakeFirst();
  return BigInt(row?.energy ?? 0n);
}

/** The reservations of these transfers (those still queued): transfer id → energy. */
async function reservationsOf(
  db: Executor<EnergyTables>,
  transferIds: readonly string[],
): Promise<Map<string, bigint>> {
  if (transferIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('crypto_energy_reservations')
    .select(['transfer_id', 'energy'])
    .where('transfer_id', 'in', transferIds)
    .execute();
  return new Map(rows.map((row) => [row.transfer_id, BigInt(row.energy)]));
}

/** Forgets claims that no longer hold (final transfers, lapsed claims): the live set stays as small as the queue. */
async function pruneClaims(tx: Tx<ReservationTables>, chain: ChainName, now: Date): Promise<void> {
  const live = liveClaims(tx, chain, now).select('r.transfer_id');
  await tx
    .deleteFrom('crypto_energy_reservations')
    .where('chain', '=', chain)
    .where('transfer_id', 'not in', live)
    .execute();
}

/**
 * Reserves own energy for the claims, in order, while `energyFreeNow` (the hot
 * wallet's energy free on chain now) less what is already promised covers each
 * one whole; returns the transfer ids reserved. One claim that does not fit does
 * not stop a smaller one after it.
 */
export async function claimOwnEnergy(
  db: Db,
  clock: Clock,
  chain: ChainName,
  energyFreeNow: bigint,
  claims: readonly EnergyClaim[],
): Promise<Set<string>> {
  const smallest = claims.reduce((least, claim) => (claim.energy < least ? claim.energy : least), energyFreeNow + 1n);
  if (smallest > energyFreeNow) return new Set();
  // Without the lock first: when what is promised already leaves too little, the creation takes no
  // lock at all (a stake used up must not queue every creation). Promises only fall as transfers
  // end, so a stale read here can only refuse a claim that might have fit: the quote burns, never less.
  if (smallest > energyFreeNow - (await reservedEnergy(db, chain, clock.now()))) return new Set();
  return inTransaction(db, async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`paygate.energy-reservations.${chain}`}))`.execute(tx);
    const now = clock.now();
    await pruneClaims(tx, chain, now);
    let left = energyFreeNow - (await reservedEnergy(tx, chain, now));
    const granted: EnergyClaim[] = [];
    for (const claim of claims) {
      if (claim.energy <= 0n || claim.energy > left) continue;
      granted.push(claim);
      left -= claim.energy;
    }
    if (granted.length > 0)
      await tx
        .insertInto('crypto_energy_reservations')
        .values(
          granted.map((claim) => ({ transfer_id: claim.transferId, chain, energy: claim.energy, created_at: now })),
        )
        .execute();
    return new Set(granted.map((claim) => claim.transferId));
  });
}

/**
 * Gives back the claims of transfers whose creation wrote nothing. A claim whose
 * transfer exists stays: a creation whose commit answer was lost may have written it.
 */
export async function releaseClaims(db: Executor<ReservationTables>, transferIds: readonly string[]): Promise<void> {
  if (transferIds.length === 0) return;
  await db
    .deleteFrom('crypto_energy_reservations')
    .where('transfer_id', 'in', transferIds)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('crypto_outgoing_transfers').select('id').whereRef('id', '=', 'transfer_id'))),
    )
    .execute();
}

/**
 * A signing pass's view of the reservations (docs/payouts.md "The quoted network
 * fee"): the hot wallet's transfers holding a reservation are planned first, on
 * all its own energy; the others see its own energy less what is still promised
 * to transfers not yet signed. The chain itself takes own energy for whatever
 * lands first, so signing the reserved ones first is what keeps their promise.
 */
export interface PassReservations {
  /** The queue with the reserved transfers first, each part in its order. */
  reservedFirst<T extends { readonly id: string }>(rows: readonly T[]): T[];
  /** The own energy a hot-wallet transfer may plan on, from what the hot wallet holds free. */
  energyFor(transferId: string, ownEnergy: bigint): bigint;
  /** The transfer is signed: its promise is kept (or broken) on chain now. */
  signed(transferId: string): void;
}

export async function passReservations(
  db: Executor<ReservationTables>,
  chain: ChainName,
  now: Date,
  hotWalletTransferIds: readonly string[],
): Promise<PassReservations> {
  const own = await reservationsOf(db, hotWalletTransferIds);
  // Transfers signed in earlier passes but not final count too: until they land, the chain has not taken their energy.
  let promised = await reservedEnergy(db, chain, now);
  return {
    reservedFirst: (rows) => [...rows.filter((row) => own.has(row.id)), ...rows.filter((row) => !own.has(row.id))],
    energyFor(transferId, ownEnergy) {
      if (own.has(transferId)) return ownEnergy;
      return ownEnergy > promised ? ownEnergy - promised : 0n;
    },
    signed(transferId) {
      const energy = own.get(transferId);
      if (energy === undefined) return;
      own.delete(transferId);
      promised -= energy;
    },
  };
}
