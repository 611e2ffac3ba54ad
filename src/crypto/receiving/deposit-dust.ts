// Dust: a USDT transfer to one of our addresses below its shop's minimum deposit
// (default 0.01 USDT). Mostly address-poisoning spam (1 micro-USDT from an
// address that looks like one the payer used), it must not move an invoice to
// confirming or underpaid, send a webhook or credit anyone. The watcher records
// it in crypto_ignored_deposits instead of crypto_deposits, in the transaction
// that records its block; the custody view counts it on its address, and it
// stays there: a sweep moves only final deposits (docs/crypto.md "Dust").
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db, type Executor } from '../../db/transaction.ts';
import { InvalidRequestError, NotFoundError } from '../../errors.ts';
import { findShopProfile } from '../../merchants/merchant-service.ts';
import { parseMinor } from '../../money/decimal.ts';
import type { UsdtTransfer } from '../tron/node-client.ts';
import * as repository from './receiving-repository.ts';
import type { IgnoredDepositRow, InvoiceRow } from './receiving-repository.ts';
import type { ChainName } from '../chain/crypto-chain.ts';

/** 0.01 USDT: a shop that never set its minimum gets this. */
export const DEFAULT_MIN_DEPOSIT_MICRO = 10_000n;
/** The bounds of a shop's minimum (the CHECK of migration 0030): 0.000001 (every transfer counts) to 100 USDT. */
const MIN_DEPOSIT_LOWEST_MICRO = 1n;
const MIN_DEPOSIT_HIGHEST_MICRO = 100_000_000n;

/**
 * The least a transfer must carry to be a deposit: the shop's minimum, or an
 * invoice's own amount when that is smaller (an invoice of 0.005 USDT is paid
 * by a transfer of 0.005).
 */
export function depositMinimumMicro(
  shopMinimumMicro: bigint,
  invoice: Pick<InvoiceRow, 'amount_micro'> | undefined,
): bigint {
  if (invoice !== undefined && invoice.amount_micro < shopMinimumMicro) return invoice.amount_micro;
  return shopMinimumMicro;
}

/** The row of a transfer recorded as dust. */
export function ignoredDepositRow(
  clock: Clock,
  chain: ChainName,
  shopId: string,
  transfer: UsdtTransfer,
  minimumMicro: bigint,
): IgnoredDepositRow {
  return {
    tx_id: transfer.txId,
    log_index: transfer.logIndex,
    chain,
    shop_id: shopId,
    address: transfer.to,
    block_number: BigInt(transfer.blockNumber),
    block_id: transfer.blockId,
    from_address: transfer.from,
    amount_micro: transfer.amount,
    minimum_micro: minimumMicro,
    seen_at: clock.now(),
  };
}

/** Each shop's minimum deposit in micro-USDT (the default for a shop that never set one). */
export function minimumDepositsOf(db: Executor, shopIds: readonly string[]): Promise<Map<string, bigint>> {
  return repository.minimumDeposits(db, shopIds, DEFAULT_MIN_DEPOSIT_MICRO);
}

/** An operator's minimum deposit for a shop, as USDT text ("0.5"); checked against the bounds. */
export function parseMinimumDeposit(text: string): bigint {
  const parsed = parseMinor(text, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new InvalidRequestError(`the minimum deposit ${parsed.problem}.`);
  if (parsed.minor < MIN_DEPOSIT_LOWEST_MICRO || parsed.minor > MIN_DEPOSIT_HIGHEST_MICRO) {
    throw new InvalidRequestError('the minimum deposit must be from 0.000001 to 100 USDT.');
  }
  return parsed.minor;
}

export async function minimumDepositOfShop(db: Db, shopId: string): Promise<bigint> {
  if (!(await findShopProfile(db, shopId))) throw new NotFoundError('No such shop.');
  return (await minimumDepositsOf(db, [shopId])).get(shopId)!;
}

/** Sets a shop's minimum deposit; transfers seen from now on are measured against it (recorded dust stays dust). */
export async function setMinimumDepositOfShop(
  deps: { readonly db: Db; readonly clock: Clock },
  shopId: string,
  minimumMicro: bigint,
): Promise<void> {
  if (minimumMicro < MIN_DEPOSIT_LOWEST_MICRO || minimumMicro > MIN_DEPOSIT_HIGHEST_MICRO)
    throw new InvalidRequestError('the minimum deposit must be from 0.000001 to 100 USDT.');
  if (!(await findShopProfile(deps.db, shopId))) throw new NotFoundError('No such shop.');
  await inTransaction(deps.db, (tx) => repository.setMinimumDeposit(tx, shopId, minimumMicro, deps.clock.now()));
}
