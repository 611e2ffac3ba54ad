// The money of payouts in the ledger (issue 14 "Ledger conventions"). Accepting a
// payout RESERVES its total_debit from the merchant's USDT main account, as
// linked pending transfers without a timeout (they must not expire while the
// chain works): the recipient amount to the hot wallet (`payout`), the network
// fee to `network_fees` and the service fee to `fees` (both `payout_fee`).
// Completion posts them; failure voids them and the funds are available again.
// The chain's actual cost is booked by the executor (network_fees → network_costs: debit, credit).
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db, type Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { executeLinked, MAX_CHAIN_LENGTH, type FanOutReservation, type LedgerBook, type LedgerRequest } from '../../ledger/ledger-service.ts';
import type { PayoutRow } from './payouts-repository.ts';

export interface PayoutOwner {
  readonly book: LedgerBook;
  readonly merchantId: string;
}

type AccountKey = ReturnType<typeof merchantAccountKey>;
type Leg = 'amount' | 'network_fee' | 'service_fee';
const LEGS: readonly Leg[] = ['amount', 'network_fee', 'service_fee'];

function legAmount(payout: Pick<PayoutRow, 'amount_micro' | 'network_fee_micro' | 'service_fee_micro'>, leg: Leg): bigint {
  return leg === 'amount' ? payout.amount_micro : leg === 'network_fee' ? payout.network_fee_micro : payout.service_fee_micro;
}

function legAccountKey(book: LedgerBook, payoutId: string, leg: Leg): AccountKey {
  const kind = leg === 'amount' ? 'hot_wallet' : leg === 'network_fee' ? 'network_fees' : 'fees';
  return systemAccountKey(book, kind, 'USDT', shardOf(payoutId));
}

const legId = (payoutId: string, leg: Leg) => `payout:${payoutId}:${leg}`;

/** Account ids remembered per database: at most this many, then forgotten all at once. */
const ACCOUNT_IDS_MAX = 10_000;
const committedAccountIds = new WeakMap<object, Map<string, string>>();

/**
 * Ledger account ids by owner key for one creation: those known committed in this
 * database (an account never changes id once committed), and those this
 * transaction resolved, remembered only once it has committed (an account it
 * created rolls back with it). Saves ensureAccounts' read on a warm key.
 */
export class AccountIds {
  readonly #committed: Map<string, string>;
  readonly resolved = new Map<string, string>();
  readonly #database: object;

  constructor(database: object) {
    this.#database = database;
    let committed = committedAccountIds.get(database);
    if (!committed) committedAccountIds.set(database, (committed = new Map()));
    this.#committed = committed;
  }

  known(key: string): string | undefined {
    return this.#committed.get(key);
  }

  /** Call after COMMIT. */
  remember(): void {
    if (this.#committed.size + this.resolved.size > ACCOUNT_IDS_MAX) this.#committed.clear();
    for (const [key, id] of this.resolved) this.#committed.set(key, id);
    committedAccountIds.set(this.#database, this.#committed);
  }
}

/** Reserves the total_debit of each payout (a zero fee reserves nothing); not enough available: InsufficientFundsError. */
export async function reservePayouts(tx: Tx, clock: Clock, owner: PayoutOwner, payouts: readonly PayoutRow[], ids?: AccountIds): Promise<void> {
  const mainKey = merchantAccountKey(owner.book, owner.merchantId, 'USDT', 'main');
  const keys = new Map<string, AccountKey>([[JSON.stringify(mainKey), mainKey]]);
  for (const payout of payouts) for (const leg of LEGS) keys.set(JSON.stringify(legAccountKey(owner.book, payout.id, leg)), legAccountKey(owner.book, payout.id, leg));
  const accountIdOf = new Map<string, string>();
  ids?.resolved.clear(); // a rerun of the transaction: what the rolled-back attempt resolved is void
  for (const key of keys.keys()) {
    const id = ids?.known(key);
    if (id !== undefined) accountIdOf.set(key, id);
  }
  const missing = [...keys].filter(([key]) => !accountIdOf.has(key));
  if (missing.length > 0) {
    const accounts = await ensureAccounts(tx, clock, missing.map(([, key]) => key));
    missing.forEach(([key], index) => accountIdOf.set(key, accounts[index]!.id));
  }
  for (const [key, id] of accountIdOf) ids?.resolved.set(key, id);
  const main = accountIdOf.get(JSON.stringify(mainKey))!;
  const requests: LedgerRequest[] = payouts.flatMap((payout) =>
    LEGS.filter((leg) => legAmount(payout, leg) > 0n).map(
      (leg): LedgerRequest => ({
        action: 'reserve',
        id: legId(payout.id, leg),
        debitAccountId: main,
        creditAccountId: accountIdOf.get(JSON.stringify(legAccountKey(owner.book, payout.id, leg)))!,
        amount: legAmount(payout, leg),
        type: leg === 'amount' ? 'payout' : 'payout_fee',
        reference: { type: 'payout', id: payout.id },
      }),
    ),
  );
  // One transaction holds every chunk: a batch is reserved whole or not at all.
  const chunk = MAX_CHAIN_LENGTH - (MAX_CHAIN_LENGTH % LEGS.length);
  for (let start = 0; start < requests.length; start += chunk) await executeLinked(tx, clock, requests.slice(start, start + chunk));
}

/**
 * A single payout's reservation as one fan-out (ledger fanOutReservations): the
 * same legs, ids and accounts as reservePayouts, for the payout's one creating
 * statement. Its accounts are resolved first (created, in a transaction of their
 * own, when missing: an account without transfers is harmless).
 */
export async function payoutFanOut(db: Db, clock: Clock, owner: PayoutOwner, payout: Pick<PayoutRow, 'id' | 'amount_micro' | 'network_fee_micro' | 'service_fee_micro'>, ids: AccountIds): Promise<FanOutReservation> {
  const mainKey = merchantAccountKey(owner.book, owner.merchantId, 'USDT', 'main');
  const legs = LEGS.filter((leg) => legAmount(payout, leg) > 0n);
  const keys = [mainKey, ...legs.map((leg) => legAccountKey(owner.book, payout.id, leg))];
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
    legs: legs.map((leg) => ({
      id: legId(payout.id, leg),
      creditAccountId: accountIdOf.get(JSON.stringify(legAccountKey(owner.book, payout.id, leg)))!,
      amount: legAmount(payout, leg),
      type: leg === 'amount' ? 'payout' : 'payout_fee',
    })),
    reference: { type: 'payout', id: payout.id },
  };
}

/**
 * Completion posts the payout's reservations; failure voids them (the merchant's funds
 * are available again). A failure the merchant caused (`networkFeeChargedMicro`, above
 * 0) posts that much of the network-fee reservation — at most what it reserved — and
 * releases the rest; the amount and the service fee are voided.
 */
export async function settlePayoutReservation(tx: Tx, clock: Clock, payout: PayoutRow, outcome: 'post' | 'void', networkFeeChargedMicro = 0n): Promise<void> {
  const charged = outcome === 'void' && networkFeeChargedMicro > 0n ? (networkFeeChargedMicro < payout.network_fee_micro ? networkFeeChargedMicro : payout.network_fee_micro) : 0n;
  const requests = LEGS.filter((leg) => legAmount(payout, leg) > 0n).map((leg): LedgerRequest => {
    if (leg === 'network_fee' && charged > 0n) return { action: 'post', id: `${legId(payout.id, leg)}:post`, pendingId: legId(payout.id, leg), amount: charged };
    return { action: outcome, id: `${legId(payout.id, leg)}:${outcome}`, pendingId: legId(payout.id, leg) };
  });
  await executeLinked(tx, clock, requests);
}
