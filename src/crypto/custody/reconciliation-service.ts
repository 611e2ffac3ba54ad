// Custody reconciliation (docs/custody.md): per book, the USDT on the addresses
// we control (the hot wallet and the deposit addresses not yet swept, read at
// the solidified block) against what the ledger says should be there. Each run
// is recorded; a shortfall beyond what an operator accepted plus the tolerance
// pauses the book's signing (signing-pause.ts) until an operator acknowledges.
//
// The reads are ordered so that money in flight never shows as missing:
// 1. the ledger's deposits credited, BEFORE the chain: a deposit is credited only
//    once its block is solidified, so every deposit counted is on chain when read;
// 2. the solidified balances: deposit addresses first, the hot wallet last, so a
//    sweep landing between the reads is counted twice (surplus), never missed;
// 3. AFTER the chain: hot-wallet transfers signed and not booked, then those
//    booked (in that order, so one booked in between counts twice, never zero
//    times): whatever left the chain before step 2 was signed before it; and the
//    deposits credited from blocks above the solidified block read (the watcher's
//    node may be ahead of the one that answered).
// expected = deposits credited − those above the block read − outgoing booked − outgoing signed, not booked
//            − moved to the cold wallet (custody, never booked; read with the in-flight ones)
// difference = on chain − expected; shortfall = what is missing beyond the USDT
// sweeps are moving (a lagging node may show a sweep on neither side).
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { inTransaction, type Db } from '../../db/transaction.ts';
import { InvalidRequestError, InvalidStateError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { custodyLedgerTotals, type CustodyLedgerTotals } from '../../ledger/custody-totals.ts';
import type { LedgerBook } from '../../ledger/ledger-service.ts';
import type { CryptoChain } from '../chain/crypto-chain.ts';
import { usdtCreditedAboveBlock } from '../receiving/custody-service.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import { hotWalletUsdtInFlight } from '../sending/outgoing-transfers.ts';
import { addressesHoldingUsdt, usdtBeingSwept } from '../sweeping/sweep-custody.ts';
import { tronAddress } from '../tron/address.ts';
import * as repository from './custody-repository.ts';
import type { ReconciliationRow } from './custody-repository.ts';

export const CUSTODY_BOOKS: readonly LedgerBook[] = ['sandbox', 'live'];
/** Most deposit addresses one run reads; past it the run fails and says so. */
const MAX_ADDRESSES_PER_RUN = 100_000;
/** Balances asked of the node at once. */
const READ_CONCURRENCY = 8;

export interface ReconciliationDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'custodyToleranceMicro'>;
  readonly chain: Pick<CryptoChain, 'forMode' | 'liveConfigured'>;
  readonly logger: Logger;
}

interface ChainHoldings {
  readonly solidifiedBlock: number;
  readonly hotWalletMicro: bigint;
  readonly depositAddressesMicro: bigint;
  readonly addressesRead: number;
}

interface Figures {
  readonly before: CustodyLedgerTotals;
  readonly after: CustodyLedgerTotals;
  readonly holdings: ChainHoldings;
  readonly outgoingInFlight: bigint;
  readonly sweepsInFlight: bigint;
  readonly depositsAboveBlock: bigint;
}

/** What a run found, as the CLI prints it (USDT as decimal strings). */
export interface ReconciliationView {
  readonly reconciliation_id: string;
  readonly book: LedgerBook;
  readonly asset: 'USDT';
  readonly outcome: 'balanced' | 'shortfall' | 'failed';
  readonly started_at: string;
  readonly solidified_block: number | null;
  readonly on_chain: {
    readonly hot_wallet: string;
    readonly deposit_addresses: string;
    readonly addresses_read: number;
    readonly total: string;
  } | null;
  readonly ledger: {
    readonly merchant_balances: string;
    readonly reserved_outgoing: string;
    readonly gateway_accounts: string;
    readonly deposits_credited: string;
    readonly deposits_above_block: string;
    readonly outgoing_booked: string;
  } | null;
  readonly outgoing_in_flight: string | null;
  readonly sweeps_in_flight: string | null;
  readonly expected: string | null;
  readonly difference: string | null;
  readonly shortfall: string | null;
  readonly accepted_shortfall: string;
  readonly tolerance: string;
  /** Whether the book's signing is paused after this run. */
  readonly signing_paused: boolean;
  readonly error: string | null;
}

/** One run for every book that has anything on chain or in the ledger (live only when configured). */
export async function reconcileAll(
  deps: ReconciliationDeps,
  options: { readonly books?: readonly LedgerBook[] } = {},
): Promise<ReconciliationView[]> {
  const views: ReconciliationView[] = [];
  for (const book of options.books ?? CUSTODY_BOOKS) {
    if (book === 'live' && !deps.chain.liveConfigured) continue;
    const view = await reconcileBook(deps, book);
    if (view) views.push(view);
  }
  return views;
}

/** One run for one book, recorded; undefined when the book has never held USDT (nothing to compare, no chain started). */
export async function reconcileBook(
  deps: ReconciliationDeps,
  book: LedgerBook,
): Promise<ReconciliationView | undefined> {
  const startedAt = deps.clock.now();
  const before = await custodyLedgerTotals(deps.db, book, 'USDT');
  if (before.depositsCredited === 0n && before.outgoingBooked === 0n && before.depositsConfirming === 0n)
    return undefined;
  let figures: Figures;
  try {
    figures = await readFigures(deps, book, before);
  } catch (error) {
    deps.logger.warn({ err: error, book }, 'custody reconciliation could not read the chain or the ledger');
    return recordFailure(deps, book, startedAt, error instanceof Error ? error.message : String(error));
  }
  return recordJudged(deps, book, startedAt, figures);
}

async function readFigures(deps: ReconciliationDeps, book: LedgerBook, before: CustodyLedgerTotals): Promise<Figures> {
  const access = await deps.chain.forMode(book);
  const holdings = await readHoldings(deps, access);
  const outgoingInFlight = await hotWalletUsdtInFlight(deps.db, access.chain);
  const sweepsInFlight = await usdtBeingSwept(deps.db, access.chain);
  const after = await custodyLedgerTotals(deps.db, book, 'USDT');
  const depositsAboveBlock = await usdtCreditedAboveBlock(deps.db, access.chain, holdings.solidifiedBlock);
  return { before, after, holdings, outgoingInFlight, sweepsInFlight, depositsAboveBlock };
}

async function readHoldings(
  deps: ReconciliationDeps,
  access: Awaited<ReturnType<CryptoChain['forMode']>>,
): Promise<ChainHoldings> {
  const { node } = access;
  const solidifiedBefore = await node.getSolidifiedBlock();
  let depositAddressesMicro = 0n;
  let addressesRead = 0;
  for await (const page of addressesHoldingUsdt(deps.db, access.keyId, MAX_ADDRESSES_PER_RUN)) {
    for (let start = 0; start < page.length; start += READ_CONCURRENCY) {
      const balances = await Promise.all(
        page
          .slice(start, start + READ_CONCURRENCY)
          .map((address) => node.getUsdtBalance(tronAddress(address), { solidified: true })),
      );
      for (const balance of balances) depositAddressesMicro += balance;
      addressesRead += balances.length;
    }
  }
  const hotWalletMicro = await node.getUsdtBalance(access.addressKey.hotWalletAddress, { solidified: true });
  const solidifiedAfter = await node.getSolidifiedBlock();
  return {
    solidifiedBlock: Math.min(solidifiedBefore.number, solidifiedAfter.number),
    hotWalletMicro,
    depositAddressesMicro,
    addressesRead,
  };
}

function judge(figures: Figures): { expected: bigint; difference: bigint; shortfall: bigint } {
  const onChain = figures.holdings.hotWalletMicro + figures.holdings.depositAddressesMicro;
  const expected =
    figures.before.depositsCredited -
    figures.depositsAboveBlock -
    figures.after.outgoingBooked -
    figures.outgoingInFlight;
  const difference = onChain - expected;
  const missing = -difference - figures.sweepsInFlight;
  return { expected, difference, shortfall: missing > 0n ? missing : 0n };
}

async function recordJudged(
  deps: ReconciliationDeps,
  book: LedgerBook,
  startedAt: Date,
  figures: Figures,
): Promise<ReconciliationView> {
  const { expected, difference, shortfall } = judge(figures);
  const tolerance = deps.config.custodyToleranceMicro;
  const { row, paused } = await inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const state = await repository.lockBookState(tx, book, 'USDT', now);
    // Covered again (the operator refilled): nothing stays accepted, the next shortfall pauses afresh.
    const accepted = shortfall <= tolerance ? 0n : state.accepted_shortfall_micro;
    const breach = shortfall > accepted + tolerance;
    const row = await repository.insertReconciliation(tx, {
      id: newId('custodyReconciliation'),
      book,
      asset: 'USDT',
      outcome: breach ? 'shortfall' : 'balanced',
      started_at: startedAt,
      finished_at: now,
      solidified_block: BigInt(figures.holdings.solidifiedBlock),
      hot_wallet_micro: figures.holdings.hotWalletMicro,
      deposit_addresses_micro: figures.holdings.depositAddressesMicro,
      addresses_read: figures.holdings.addressesRead,
      deposits_credited_micro: figures.before.depositsCredited,
      deposits_above_block_micro: figures.depositsAboveBlock,
      outgoing_booked_micro: figures.after.outgoingBooked,
      outgoing_in_flight_micro: figures.outgoingInFlight,
      sweeps_in_flight_micro: figures.sweepsInFlight,
      merchant_balances_micro: figures.after.merchantBalances,
      reserved_outgoing_micro: figures.after.reservedOutgoing,
      gateway_fees_micro: figures.after.gatewayAccounts,
      expected_micro: expected,
      difference_micro: difference,
      shortfall_micro: shortfall,
      accepted_shortfall_micro: accepted,
      tolerance_micro: tolerance,
      error_message: null,
    });
    const pauseNow = breach && state.paused_since === null;
    if (pauseNow || accepted !== state.accepted_shortfall_micro) {
      await repository.updateBookState(tx, book, 'USDT', {
        paused_since: pauseNow ? now : state.paused_since,
        paused_by_reconciliation: pauseNow ? row.id : state.paused_by_reconciliation,
        accepted_shortfall_micro: accepted,
        updated_at: now,
      });
    }
    return { row, paused: breach || state.paused_since !== null };
  });
  if (row.outcome === 'shortfall') {
    deps.logger.error(
      { book, reconciliation_id: row.id, shortfall_usdt: usdtText(shortfall), difference_usdt: usdtText(difference) },
      'custody shortfall: less USDT on chain than the ledger holds; signing of this book is paused until an operator acknowledges (paygate crypto reconcile --acknowledge)',
    );
  }
  return reconciliationView(row, paused);
}

async function recordFailure(
  deps: ReconciliationDeps,
  book: LedgerBook,
  startedAt: Date,
  message: string,
): Promise<ReconciliationView> {
  const { row, paused } = await inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const state = await repository.lockBookState(tx, book, 'USDT', now);
    const row = await repository.insertReconciliation(tx, {
      id: newId('custodyReconciliation'),
      book,
      asset: 'USDT',
      outcome: 'failed',
      started_at: startedAt,
      finished_at: now,
      addresses_read: 0,
      accepted_shortfall_micro: state.accepted_shortfall_micro,
      tolerance_micro: deps.config.custodyToleranceMicro,
      error_message: message.slice(0, 1000),
    });
    return { row, paused: state.paused_since !== null };
  });
  return reconciliationView(row, paused);
}

const text = (micro: bigint | null): string | null => (micro === null ? null : usdtText(micro));

function reconciliationView(row: ReconciliationRow, signingPaused: boolean): ReconciliationView {
  const read = row.hot_wallet_micro !== null && row.deposit_addresses_micro !== null;
  return {
    reconciliation_id: row.id,
    book: row.book,
    asset: row.asset,
    outcome: row.outcome,
    started_at: row.started_at.toISOString(),
    solidified_block: row.solidified_block === null ? null : Number(row.solidified_block),
    on_chain: read
      ? {
          hot_wallet: usdtText(row.hot_wallet_micro!),
          deposit_addresses: usdtText(row.deposit_addresses_micro!),
          addresses_read: row.addresses_read,
          total: usdtText(row.hot_wallet_micro! + row.deposit_addresses_micro!),
        }
      : null,
    ledger:
      row.deposits_credited_micro === null
        ? null
        : {
            merchant_balances: usdtText(row.merchant_balances_micro!),
            reserved_outgoing: usdtText(row.reserved_outgoing_micro!),
            gateway_accounts: usdtText(row.gateway_fees_micro!),
            deposits_credited: usdtText(row.deposits_credited_micro),
            deposits_above_block: usdtText(row.deposits_above_block_micro ?? 0n),
            outgoing_booked: usdtText(row.outgoing_booked_micro!),
          },
    outgoing_in_flight: text(row.outgoing_in_flight_micro),
    sweeps_in_flight: text(row.sweeps_in_flight_micro),
    expected: text(row.expected_micro),
    difference: text(row.difference_micro),
    shortfall: text(row.shortfall_micro),
    accepted_shortfall: usdtText(row.accepted_shortfall_micro),
    tolerance: usdtText(row.tolerance_micro),
    signing_paused: signingPaused,
    error: row.error_message,
  };
}

const ACKNOWLEDGED_BY_MAX_LENGTH = 200;
export const NOTE_MAX_LENGTH = 1_000;

export interface Acknowledgement {
  readonly acknowledgement_id: string;
  readonly book: LedgerBook;
  readonly reconciliation_id: string;
  readonly accepted_shortfall: string;
  readonly acknowledged_by: string;
  readonly note: string | null;
  readonly acknowledged_at: string;
}

/**
 * An operator resumes a paused book's signing. The shortfall of the book's latest
 * judged run is accepted: later runs pause again only when more than that (plus the
 * tolerance) is missing, and once a run finds it covered, nothing stays accepted.
 */
export async function acknowledgeShortfall(
  deps: Pick<ReconciliationDeps, 'db' | 'clock' | 'logger'>,
  input: { readonly book: LedgerBook; readonly acknowledgedBy: string; readonly note?: string | undefined },
): Promise<Acknowledgement> {
  const by = input.acknowledgedBy.trim();
  if (by.length < 1 || by.length > ACKNOWLEDGED_BY_MAX_LENGTH)
    throw new InvalidRequestError(`the operator's name must be 1 to ${ACKNOWLEDGED_BY_MAX_LENGTH} characters`);
  if (input.note !== undefined && input.note.length > NOTE_MAX_LENGTH)
    throw new InvalidRequestError(`the note must be at most ${NOTE_MAX_LENGTH} characters`);
  const row = await inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const state = await repository.lockBookState(tx, input.book, 'USDT', now);
    if (state.paused_since === null)
      throw new InvalidStateError(`signing of the ${input.book} book is not paused; there is nothing to acknowledge`);
    const [latest] = await repository.latestReconciliations(tx, input.book, 'USDT', { limit: 1, judged: true });
    const accepted = latest?.shortfall_micro ?? 0n;
    await repository.updateBookState(tx, input.book, 'USDT', {
      paused_since: null,
      paused_by_reconciliation: null,
      accepted_shortfall_micro: accepted,
      updated_at: now,
    });
    return repository.insertAcknowledgement(tx, {
      id: newId('custodyAcknowledgement'),
      book: input.book,
      asset: 'USDT',
      reconciliation_id: latest?.id ?? state.paused_by_reconciliation!,
      accepted_shortfall_micro: accepted,
      acknowledged_by: by,
      note: input.note ?? null,
      acknowledged_at: now,
    });
  });
  deps.logger.warn(
    {
      book: row.book,
      acknowledged_by: row.acknowledged_by,
      accepted_shortfall_usdt: usdtText(row.accepted_shortfall_micro),
    },
    'custody shortfall acknowledged: signing resumes',
  );
  return {
    acknowledgement_id: row.id,
    book: row.book,
    reconciliation_id: row.reconciliation_id,
    accepted_shortfall: usdtText(row.accepted_shortfall_micro),
    acknowledged_by: row.acknowledged_by,
    note: row.note,
    acknowledged_at: row.acknowledged_at.toISOString(),
  };
}
