// A fresh deposit address: the key's next derivation index, taken by UPDATE …
// RETURNING on its counter inside the creating transaction (allocated once,
// never reused), derived from the xpub, recorded with its shop and purpose.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ServiceUnavailableError } from '../../errors.ts';
import { DEPOSIT_INDEX_LIMIT } from '../keys/hd-keys.ts';
import type { ChainAccess } from './crypto-chain.ts';
import { insertAddress, takeNextIndex } from './receiving-repository.ts';
import type { AddressPurpose } from './receiving-tables.ts';

export async function allocateDepositAddress(tx: Tx, clock: Clock, access: ChainAccess, shopId: string, purpose: AddressPurpose): Promise<string> {
  const index = await takeNextIndex(tx, access.keyId);
  if (index >= DEPOSIT_INDEX_LIMIT) throw new ServiceUnavailableError('Every deposit address index of this key is used; configure a new account key.', 3600);
  const address = access.addressKey.address(index);
  await insertAddress(tx, { address, key_id: access.keyId, derivation_index: BigInt(index), shop_id: shopId, purpose, created_at: clock.now() });
  return address;
}
