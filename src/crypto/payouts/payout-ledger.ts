// The money of payouts in the ledger (issue 14 "Ledger conventions"), held by
// the reserved-transfer machine (crypto/sending/reservation-ledger.ts). Accepting
// a payout RESERVES its total_debit from the merchant's USDT main account: the
// recipient amount to the hot wallet (`payout`), the network fee to
// `network_fees` and the service fee to `fees` (both `payout_fee`). Payouts
// reserve many at once (a batch, payouts created together), so their accounts
// are resolved here, with the ids of committed accounts remembered.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db, type Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey } from '../../ledger/ledger-accounts.ts';
import {
  executeLinked,
  MAX_CHAIN_LENGTH,
  type FanOutReservation,
  type LedgerBook,
  type LedgerRequest,
  type TransferType,
} from '../../ledger/ledger-service.ts';
import {
  legAccountKey,
  legId,
  reservationOf,
  type Reservation,
  type ReservationLeg,
} from '../sending/reservation-ledger.ts';
import type { PayoutRow } from './payouts-repository.ts';

export interface PayoutOwner {
  readonly book: LedgerBook;
  readonly merchantId: string;
}

type AccountKey = ReturnType<typeof merchantAccountKey>;
const LEGS: readonly ReservationLeg[] = ['amount', 'network_fee', 'service_fee'];

export function payoutReservation(
  payout: Pick<PayoutRow, 'id' | 'amount_micro' | 'network_fee_micro' | 'service_fee_micro'>,
): Reservation {
  return reservationOf(
    { type: 'payout', id: payout.id },
    { amount: payout.amount_micro, network_fee: payout.network_fee_micro, service_fee: payout.service_fee_micro },
  );
}

const legType = (leg: ReservationLeg): TransferType => (leg === 'amount' ? 'payout' : 'payout_fee');

/** Account ids remembered: at most this many, the least recently used forgotten first. */
const ACCOUNT_IDS_MAX = 10_000;

/** Ledger account ids by owner key, of accounts known committed (an account never changes id once committed). */
export type CommittedAccountIds = LRUCache<string, string>;

/** The payouts module's memory of committed account ids (one per module, for its database). */
export function createCommittedAccountIds(): CommittedAccountIds {
  return new LRUCache({ max: ACCOUNT_IDS_MAX });
}

/**
 * Ledger account ids by owner key for one creation: those known committed in this
 * database (an account never changes id once committed), and those this
 * transaction resolved, remembered only once it has committed (an account it
 * created rolls back with it). Saves ensureAccounts' read on a warm key.
 */
export class AccountIds {
  readonly #committed: CommittedAccountIds;
  readonly resolved = new Map<string, string>();

  constructor(committed: CommittedAccountIds) {
    this.#committed = committed;
  }

  known(key: string): string | undefined {
    return this.#committed.get(key);
  }

  /** Call after COMMIT. */
  remember(): void {
    for (const [key, id] of this.resolved) this.#committed.set(key, id);
  }
}

/** Reserves the total_debit of each payout (a zero fee reserves nothing); not enough available: InsufficientFundsError. */
export async function reservePayouts(
  tx: Tx,
  clock: Clock,
  owner: PayoutOwner,
  payouts: readonly PayoutRow[],
  ids?: AccountIds,
): Promise<void> {
  const mainKey = merchantAccountKey(owner.book, owner.merchantId, 'USDT', 'main');
  const keys = new Map<string, AccountKey>([[JSON.stringify(mainKey), mainKey]]);
  for (const payout of payouts)
    for (const leg of LEGS)
      keys.set(JSON.stringify(legAccountKey(owner.book, payout.id, leg)), legAccountKey(owner.book, payout.id, leg));
  const accountIdOf = new Map<string, string>();
  ids?.resolved.clear(); // a rerun of the transaction: what the rolled-back attempt resolved is void
  for (const key of keys.keys()) {
    const id = ids?.known(key);
    if (id !== undefined) accountIdOf.set(key, id);
  }
  const missing = [...keys].filter(([key]) => !accountIdOf.has(key));
  if (missing.length > 0) {
    const accounts = await ensureAccounts(
      tx,
      clock,
      missing.map(([, key]) => key),
    );
    missing.forEach(([key], index) => accountIdOf.set(key, accounts[index]!.id));
  }
  for (const [key, id] of accountIdOf) ids?.resolved.set(key, id);
  const main = accountIdOf.get(JSON.stringify(mainKey))!;
  const requests: LedgerRequest[] = payouts.flatMap((payout) => {
    const { owner: reference, legs } = payoutReservation(payout);
    return legs.map(({ leg, amount }): LedgerRequest => ({
      action: 'reserve',
      id: legId(reference, leg),
      debitAccountId: main,
      creditAccountId: accountIdOf.get(JSON.stringify(legAccountKey(owner.book, payout.id, leg)))!,
      amount,
      type: legType(leg),
      reference,
    }));
  });
  // One transaction holds every chunk: a batch is reserved whole or not at all.
  const chunk = MAX_CHAIN_LENGTH - (MAX_CHAIN_LENGTH % LEGS.length);
  for (let start = 0; start < requests.length; start += chunk)
    await executeLinked(tx, clock, requests.slice(start, start + chunk));
}

/**
 * A single payout's reservation as one fan-out (ledger fanOutReservations): the
 * same legs, ids and accounts as reservePayouts, for the payout's one creating
 * statement. Its accounts are resolved first (created, in a transaction of their
 * own, when missing: an account without transfers is harmless).
 */
export async function payoutFanOut(
  db: Db,
  clock: Clock,
  owner: PayoutOwner,
  payout: Pick<PayoutRow, 'id' | 'amount_micro' | 'network_fee_micro' | 'service_fee_micro'>,
  ids: AccountIds,
): Promise<FanOutReservation> {
  const mainKey = merchantAccountKey(owner.book, owner.merchantId, 'USDT', 'main');
  const { owner: reference, legs } = payoutReservation(payout);
  const keys = [mainKey, ...legs.map(({ leg }) => legAccountKey(owner.book, payout.id, leg))];
  const accountIdOf = new Map<string, string>();
  for (const key of keys) {
    const id = ids.known(JSON.stringify(key));
    if (id !== undefined) accountIdOf.set(JSON.stringify(key), id);
  }
  const missing = keys.filter((key) => !accountIdOf.has(JSON.stringify(key)));
  if (missing.length > 0) {
    const accounts = await inTransaction(db, (tx) => ensureAccounts(tx, clock, missing));
    missing.forEach((key, index) => {
      accountIdOf.set(JSON.stringify(key), accounts[index]!.id);
      ids.resolved.set(JSON.stringify(key), accounts[index]!.id);
    });
    ids.remember(); // committed: their ids never change
  }
  return {
    debitAccountId: accountIdOf.get(JSON.stringify(mainKey))!,
    legs: legs.map(({ leg, amount }) => ({
      id: legId(reference, leg),
      creditAccountId: accountIdOf.get(JSON.stringify(legAccountKey(owner.book, payout.id, leg)))!,
      amount,
      type: legType(leg),
    })),
    reference,
  };
}
