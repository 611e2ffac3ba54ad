// The ledger side of a deposit: hot wallet (USDT, the shop's book) → the
// merchant's USDT main account.
//   seen (confirming)  reserve `crypto-deposit:<id>:<round>`   pending: the balance shows it as pending
//   final, credited    post    `crypto-deposit:<id>`           available
//   orphaned or held   void    `crypto-deposit:<id>:<round>:void`
// An orphaned deposit seen again starts the next round (credit_round + 1), so
// each reservation id is used once. The reservation has no timeout: a deposit
// may wait for its block to become final as long as the chain takes. Round 0 is
// a deposit recorded before pending credits existed (migration 0018): credited
// by a plain transfer of the same id, with nothing to void.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { executeBatch, MAX_BATCH_LENGTH, type LedgerRequest } from '../../ledger/ledger-service.ts';
import { findShopProfile } from '../../merchants/merchant-service.ts';
import type { DepositRow } from './receiving-repository.ts';

/** The ledger id of a deposit's credit (the post, or the plain transfer of round 0): one per deposit, ever. */
const depositCreditId = (depositId: string): string => `crypto-deposit:${depositId}`;
const pendingCreditId = (deposit: Pick<DepositRow, 'id' | 'credit_round'>): string =>
  `crypto-deposit:${deposit.id}:${deposit.credit_round}`;

/** The ledger's batches are bounded; a scan batch of blocks may record more deposits than one holds. */
async function executeInBatches(tx: Tx, clock: Clock, requests: readonly LedgerRequest[]): Promise<void> {
  for (let start = 0; start < requests.length; start += MAX_BATCH_LENGTH)
    await executeBatch(tx, clock, requests.slice(start, start + MAX_BATCH_LENGTH));
}

export interface DepositAccounts {
  readonly mainAccountId: string;
  readonly hotWalletAccountId: string;
}

/** Each deposit's two accounts, created when missing: one look-up per shop, one for all accounts. */
export async function depositAccounts(
  tx: Tx,
  clock: Clock,
  deposits: readonly DepositRow[],
): Promise<Map<string, DepositAccounts>> {
  const shops = new Map<string, { mode: 'sandbox' | 'live'; merchantId: string }>();
  for (const shopId of new Set(deposits.map((deposit) => deposit.shop_id))) {
    const shop = await findShopProfile(tx, shopId);
    if (!shop) throw new Error(`deposits of shop ${shopId}: the shop is missing`);
    shops.set(shopId, shop);
  }
  const keys = deposits.flatMap((deposit) => {
    const shop = shops.get(deposit.shop_id)!;
    return [
      merchantAccountKey(shop.mode, shop.merchantId, 'USDT', 'main'),
      systemAccountKey(shop.mode, 'hot_wallet', 'USDT', shardOf(deposit.id)),
    ];
  });
  const unique = new Map(keys.map((key) => [JSON.stringify(key), key]));
  const rows = await ensureAccounts(tx, clock, [...unique.values()]);
  const idOf = new Map([...unique.keys()].map((text, index) => [text, rows[index]!.id]));
  return new Map(
    deposits.map((deposit, index) => [
      deposit.id,
      {
        mainAccountId: idOf.get(JSON.stringify(keys[2 * index]))!,
        hotWalletAccountId: idOf.get(JSON.stringify(keys[2 * index + 1]))!,
      },
    ]),
  );
}

/** Pending credits for deposits just seen (new, or orphaned and seen again). */
export async function reserveDepositCredits(tx: Tx, clock: Clock, deposits: readonly DepositRow[]): Promise<void> {
  if (deposits.length === 0) return;
  const accounts = await depositAccounts(tx, clock, deposits);
  await executeInBatches(
    tx,
    clock,
    deposits.map((deposit): LedgerRequest => ({
      action: 'reserve',
      id: pendingCreditId(deposit),
      debitAccountId: accounts.get(deposit.id)!.hotWalletAccountId,
      creditAccountId: accounts.get(deposit.id)!.mainAccountId,
      amount: deposit.amount_micro,
      type: 'deposit',
      reference: { type: 'deposit', id: deposit.id },
    })),
  );
}

/** The pending credits of deposits that left the chain (orphaned): voided, the merchant's pending shrinks. */
export async function voidDepositCredits(tx: Tx, clock: Clock, deposits: readonly DepositRow[]): Promise<void> {
  const withCredit = deposits.filter((deposit) => deposit.credit_round > 0);
  await executeInBatches(
    tx,
    clock,
    withCredit.map((deposit): LedgerRequest => ({
      action: 'void',
      id: `${pendingCreditId(deposit)}:void`,
      pendingId: pendingCreditId(deposit),
    })),
  );
}

/** Final deposits: credited ones posted (or, round 0, transferred), held ones voided. */
export async function settleDepositCredits(
  tx: Tx,
  clock: Clock,
  deposits: readonly DepositRow[],
  accounts: ReadonlyMap<string, DepositAccounts>,
): Promise<void> {
  const requests = deposits.flatMap((deposit): LedgerRequest[] => {
    if (deposit.status === 'held')
      return deposit.credit_round > 0
        ? [{ action: 'void', id: `${pendingCreditId(deposit)}:void`, pendingId: pendingCreditId(deposit) }]
        : [];
    if (deposit.credit_round > 0)
      return [{ action: 'post', id: depositCreditId(deposit.id), pendingId: pendingCreditId(deposit) }];
    const { hotWalletAccountId, mainAccountId } = accounts.get(deposit.id)!;
    return [
      {
        action: 'transfer',
        id: depositCreditId(deposit.id),
        debitAccountId: hotWalletAccountId,
        creditAccountId: mainAccountId,
        amount: deposit.amount_micro,
        type: 'deposit',
        reference: { type: 'deposit', id: deposit.id },
      },
    ];
  });
  await executeInBatches(tx, clock, requests);
}
