// A fresh deposit address in two steps. First one is reserved: a ready one from
// the pool the worker derives ahead (address-pool.ts), or, when the pool is
// empty, the key's next derivation index taken by an UPDATE … RETURNING on its
// counter that commits on its own (the counter row is locked for that one
// statement only, so creations run in parallel) and the address derived from
// the xpub outside any transaction (about 0.7 ms of CPU). Then the creating
// statement or transaction records the address with its shop and purpose. An
// index is used at most once: a creation that fails after reserving leaves a
// gap, never a reuse.
import type { Clock } from '../../clock.ts';
import type { Db, Tx } from '../../db/transaction.ts';
import { ServiceUnavailableError } from '../../errors.ts';
import { DEPOSIT_INDEX_LIMIT } from '../keys/hd-keys.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import type { AddressPool } from './address-pool.ts';
import { firstAddressOfKey, insertAddress, takeNextIndex } from './receiving-repository.ts';
export { depositAddressesAmong, isDepositAddressSql } from './receiving-repository.ts';
import type { AddressPurpose } from './receiving-tables.ts';

export interface ReservedAddress {
  readonly index: number;
  readonly address: string;
}

export async function reserveDepositAddress(
  db: Db,
  clock: Clock,
  access: ChainAccess,
  pool: AddressPool,
): Promise<ReservedAddress> {
  const pooled = await pool.take(db, clock, access);
  if (pooled) return pooled;
  const index = await takeNextIndex(db, access.keyId);
  if (index >= DEPOSIT_INDEX_LIMIT)
    throw new ServiceUnavailableError(
      'Every deposit address index of this key is used; configure a new account key.',
      3600,
    );
  return { index, address: access.addressKey.address(index) };
}

export async function recordDepositAddress(
  tx: Tx,
  clock: Clock,
  access: ChainAccess,
  reserved: ReservedAddress,
  shopId: string,
  purpose: AddressPurpose,
): Promise<string> {
  await insertAddress(tx, {
    address: reserved.address,
    key_id: access.keyId,
    derivation_index: BigInt(reserved.index),
    shop_id: shopId,
    purpose,
    created_at: clock.now(),
  });
  return reserved.address;
}

/**
 * Refuses a key that is not the one this database's addresses of its kind were
 * derived from: the first address on record must be the key's own address at
 * that index. Roles with different data folders (different sandbox seeds), or a
 * replaced live xpub, would otherwise hand out addresses nobody can sweep and
 * send from a hot wallet the others do not know. Checked once per chain access
 * (the result is kept; a failure is not, so it is reported on every use).
 */
export function createKeyOfDatabaseCheck(db: Db): (access: ChainAccess) => Promise<void> {
  const checks = new Map<ChainAccess, Promise<void>>();
  return (access) => {
    let checked = checks.get(access);
    if (!checked) {
      checked = assertKeyOfDatabase(db, access);
      checks.set(access, checked);
      checked.catch(() => checks.delete(access));
    }
    return checked;
  };
}

async function assertKeyOfDatabase(db: Db, access: ChainAccess): Promise<void> {
  const first = await firstAddressOfKey(db, access.keyId);
  if (!first || access.addressKey.address(Number(first.derivation_index)) === first.address) return;
  const setting = access.keyId === 'sandbox' ? 'sandbox seed (sealed in the database)' : 'PAYGATE_TRON_XPUB_FILE';
  throw new ServiceUnavailableError(
    `The ${access.keyId} deposit key of this process is not the one this database's ${access.keyId} addresses were derived from ` +
      `(address ${first.address} at index ${first.derivation_index}): every role must use the same ${setting}.`,
    3600,
  );
}
