// What the receiving module tells other crypto modules of the deposits and
// addresses it owns: refunds ask which deposits a refund may send back, sweeping
// asks where final USDT sits and tells what it moved off an address. Each read
// takes the caller's executor, so one made inside the caller's transaction sees
// that transaction.
import type { RawBuilder } from 'kysely';
import type { Executor, Tx } from '../../db/transaction.ts';
import * as repository from './receiving-repository.ts';
import type { CryptoReceivingTables } from './receiving-tables.ts';

type ReceivingExecutor = Executor<CryptoReceivingTables>;

/** A deposit of this shop (any status), or undefined. */
export function depositOfShop(
  db: ReceivingExecutor,
  shopId: string,
  depositId: string,
): Promise<repository.DepositSummary | undefined> {
  return repository.findDepositSummaryOfShop(db, shopId, depositId);
}

/** Whether the invoice exists and is this shop's. */
export async function isInvoiceOfShop(db: ReceivingExecutor, shopId: string, invoiceId: string): Promise<boolean> {
  return (await repository.findInvoiceOfShop(db, shopId, invoiceId)) !== undefined;
}

/** An invoice's credited deposits, in block order. */
export function creditedDepositsOfInvoice(
  db: ReceivingExecutor,
  invoiceId: string,
): Promise<repository.DepositSummary[]> {
  return repository.creditedDepositsOfInvoice(db, invoiceId);
}

export async function isDepositAddress(db: ReceivingExecutor, address: string): Promise<boolean> {
  return (await repository.depositAddressesAmong(db, [address])).has(address);
}

/** The HD key and derivation index of each of these addresses that is a deposit address. */
export function addressDerivations(
  db: ReceivingExecutor,
  addresses: readonly string[],
): ReturnType<typeof repository.addressDerivations> {
  return repository.addressDerivations(db, addresses);
}

/**
 * What a completed sweep moved off a deposit address, added to the address's running
 * total in the sweep's transaction: the address then holds that much less final USDT.
 */
export function recordSweptUsdt(tx: Tx<CryptoReceivingTables>, address: string, amountMicro: bigint): Promise<void> {
  return repository.addSweptUsdt(tx, address, amountMicro);
}

/** Unconfirmed deposits (held for the operator), oldest block first. */
export function unconfirmedDeposits(db: ReceivingExecutor, limit: number): Promise<repository.DepositRow[]> {
  return repository.unconfirmedDeposits(db, limit);
}

/** SQL of receiving's side for another module's single-statement read (see receiving-repository.ts). */
export const depositSql = {
  unsweptAddresses: repository.unsweptAddressesSql,
  usdtTotalsOfAddresses: repository.usdtTotalsOfAddressesSql,
  oldestFinalDepositAfter: repository.oldestFinalDepositAfterSql,
  isAddressOfKey: repository.isAddressOfKeySql,
  isDepositAddress: repository.isDepositAddressSql,
} satisfies Record<string, (...args: never[]) => RawBuilder<unknown>>;
