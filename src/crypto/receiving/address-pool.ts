// Deposit addresses derived ahead of need (migration 0023). Deriving one from the
// xpub is about 0.7 ms of CPU, more than everything else an invoice costs, so the
// worker role derives them in idle time into the pool, and each process that
// creates invoices and wallets claims them from it in batches (one DELETE …
// RETURNING per POOL_CLAIM_BATCH creations, SKIP LOCKED so processes never
// queue on each other) and hands them out from memory (the receiving module's
// AddressPool, one per module). A claimed address that a
// process exits holding is simply never used: an index gap, never a reuse. An
// empty pool only makes creation slower: it derives the address itself.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { DepositAddressKey } from '../keys/hd-keys.ts';
import { DEPOSIT_INDEX_LIMIT } from '../keys/hd-keys.ts';
import type { Db } from '../../db/transaction.ts';
import type { AddressKeyId, ChainAccess } from '../chain/crypto-chain.ts';
import {
  claimPooledAddresses,
  countPooledAddresses,
  insertPooledAddresses,
  takeIndexBlock,
  type KeyedAddress,
} from './receiving-repository.ts';

/** Addresses derived and inserted per round: one index block, one INSERT. */
const POOL_FILL_BATCH = 250;
/** Derivations between yields to the event loop, so a filling pass never holds it for more than a few ms. */
const DERIVATIONS_PER_SLICE = 8;

/** Addresses a process claims from the pool at once. */
const POOL_CLAIM_BATCH = 64;
/** After finding the pool empty, creations derive inline this long before asking it again. */
const EMPTY_POOL_RETRY_MS = 1_000;

/** Names the xpub that derived a pooled address (16 hex digits of its SHA-256): another key's rows are never taken. */
export function addressKeyFingerprint(key: DepositAddressKey): string {
  return createHash('sha256').update(key.xpub).digest('hex').slice(0, 16);
}

export interface PoolFillOptions {
  /** How many ready addresses the pool holds when full (PAYGATE_ADDRESS_POOL_SIZE). */
  readonly size: number;
  readonly logger?: Logger | undefined;
  /** Checked between rounds: a stopping worker leaves the rest for later. */
  readonly stopping?: (() => boolean) | undefined;
}

/**
 * Tops the pool of one key up to `size` once it has fallen to half (filling in
 * large rounds, not one address per creation). Returns how many it added.
 * Several workers may fill at once: each takes its own index block, so the
 * pool can overshoot by a round, never share an index.
 */
export async function fillAddressPool(db: Db, access: ChainAccess, options: PoolFillOptions): Promise<number> {
  if (options.size <= 0) return 0;
  const fingerprint = addressKeyFingerprint(access.addressKey);
  const have = await countPooledAddresses(db, access.keyId, fingerprint);
  if (have > options.size / 2) return 0;
  let added = 0;
  while (have + added < options.size && !options.stopping?.()) {
    const count = Math.min(POOL_FILL_BATCH, options.size - have - added);
    const first = await takeIndexBlock(db, access.keyId, count);
    const rows = [];
    for (let index = first; index < first + count && index < DEPOSIT_INDEX_LIMIT; index++) {
      rows.push({
        key_id: access.keyId,
        derivation_index: BigInt(index),
        key_fingerprint: fingerprint,
        address: access.addressKey.address(index),
      });
      if (rows.length % DERIVATIONS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await insertPooledAddresses(db, rows);
    added += rows.length;
    if (rows.length < count) break; // the key's index range is used up: creations report it
  }
  if (added > 0)
    options.logger?.debug({ keyId: access.keyId, added, pooled: have + added }, 'deposit address pool topped up');
  return added;
}

interface Claimed {
  readonly queue: KeyedAddress[];
  refill: Promise<void> | undefined;
  emptyUntil: number;
}

/** The addresses this process claimed from the pool, per key, handed out from memory. */
export interface AddressPool {
  /** A ready address of this chain's key for a new invoice or wallet, or undefined when the pool is empty. */
  take(db: Db, clock: Clock, access: ChainAccess): Promise<KeyedAddress | undefined>;
  /**
   * Gives back an address whose creation certainly wrote nothing (its statement
   * failed on a unique key), so the next creation here uses it. Never after an
   * error that leaves the outcome unknown: that address may be recorded.
   */
  giveBack(access: ChainAccess, address: KeyedAddress): void;
}

/** What invoice and wallet creation take addresses from: the receiving module's pool. */
export interface AddressPoolDeps {
  readonly addressPool: AddressPool;
}

export function createAddressPool(): AddressPool {
  const claimedOf = new Map<AddressKeyId, Claimed>();
  return {
    take(db, clock, access) {
      let claimed = claimedOf.get(access.keyId);
      if (!claimed) {
        claimed = { queue: [], refill: undefined, emptyUntil: 0 };
        claimedOf.set(access.keyId, claimed);
      }
      return takeClaimed(db, clock, access, claimed);
    },
    giveBack(access, address) {
      claimedOf.get(access.keyId)?.queue.unshift(address);
    },
  };
}

async function takeClaimed(
  db: Db,
  clock: Clock,
  access: ChainAccess,
  state: Claimed,
): Promise<KeyedAddress | undefined> {
  while (state.queue.length === 0) {
    if (clock.now().getTime() < state.emptyUntil) return undefined;
    // One claim at a time per process: concurrent creations wait for the same batch.
    state.refill ??= claimPooledAddresses(db, access.keyId, addressKeyFingerprint(access.addressKey), POOL_CLAIM_BATCH)
      .then((rows) => {
        for (const row of rows)
          state.queue.push({ keyId: access.keyId, index: Number(row.derivation_index), address: row.address });
        if (rows.length === 0) state.emptyUntil = clock.now().getTime() + EMPTY_POOL_RETRY_MS;
      })
      .finally(() => {
        state.refill = undefined;
      });
    await state.refill;
  }
  return state.queue.shift();
}
