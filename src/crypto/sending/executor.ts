// The sign-once executor of one chain (docs/payouts.md). One pass:
//  1. leadership: take or renew the lease (one executor sends per chain; a
//     crashed leader's lease runs out). Correctness never rests on it: a
//     transfer's attempt number is claimed by a conditional UPDATE and the
//     attempt's primary key, so two executors can never sign two transactions
//     for the same transfer;
//  2. results: read every new solidified block with the results of its
//     transactions, proven complete (one result per transaction of the block;
//     a block no node proves stops the read), and finish each transfer whose
//     transaction is in one: SUCCESS → confirmed; REVERT / OUT_OF_ENERGY →
//     failed; the fee is recorded and booked, and the owner's onFinal runs in
//     the same transaction;
//  3. expiry: once the read has reached the newest solidified block, a transfer
//     whose current transaction expired before that block was made is checked
//     txID by txID (every attempt it ever had) on two nodes; found → finished as
//     above; none on chain by the word of both → every attempt is dead, and a
//     new one is signed (or the transfer fails after the last attempt);
//  4. re-broadcast the SAME bytes of attempts whose broadcast result is
//     unknown (or never came: a crash between signing and broadcasting);
//  5. sign: queued transfers, oldest first, within the in-flight bound and
//     what the sending address holds; each attempt (bytes, txID, expiration) is
//     committed BEFORE its first broadcast; then broadcast; accepted or
//     duplicate → submitted (the owner's onSubmitted, same transaction).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { ConfigError } from '../../config.ts';
import { inTransaction, type Db, type Tx } from '../../db/transaction.ts';
import { ensureAccounts, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { transfer as ledgerTransfer } from '../../ledger/ledger-service.ts';
import type { DepositSigningKey } from '../keys/hd-keys.ts';
import { tronAddressFromPrivateKey, type TronAddress } from '../tron/address.ts';
import { TronNodeUnavailableError, type BlockHeader, type BroadcastResult, type TransactionOutcome, type TronNodeClient } from '../tron/node-client.ts';
import { encodeSignedTransaction, encodeTransferContractRaw, encodeTriggerSmartContractRaw, referenceBlockFields, transactionId } from '../tron/transaction.ts';
import { transferCalldata } from '../tron/trc20-usdt.ts';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { OutflowCap } from './outflow-cap.ts';
import { toOutgoingTransfer, OUTGOING_PURPOSES, type OutgoingErrorCode, type OutgoingOutcomeHandler, type OutgoingPurpose } from './outgoing-transfers.ts';
import * as repository from './sending-repository.ts';
import { inThreadSigning, type SigningPool } from './signing-pool.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import type { ChainName } from './sending-tables.ts';
import { sunToMicroUsdt, TRX_TRANSFER_BANDWIDTH, USDT_TRANSFER_BANDWIDTH } from './transfer-cost.ts';
import { feeLimitFor, freshRecipient, TRANSFER_ENERGY_MAX_DEFAULT, usdtTransferEnergy } from './transfer-energy.ts';

export const LEASE_MS = 30_000;
/** A transaction expires this long after the head block it was built at (java-tron's default is 60 s; docs/tron.md §1.4: keep it short). */
export const EXPIRATION_MS = 90_000;
export { FEE_LIMIT_FLOOR_SUN } from './transfer-energy.ts';
/** Solidified blocks whose results one pass reads. */
export const SCAN_BLOCKS_PER_PASS = 200;
const SCAN_CONCURRENCY = 8;
/** Nodes whose newest head a pass takes (fewer when fewer are configured). */
const HEAD_WITNESSES = 2;
/** Different nodes that must each answer `{}` for an expired transaction before it is judged absent (fewer when fewer are configured). */
export const ABSENCE_WITNESSES = 2;
/** Transfers signed per pass, and per signing transaction. */
export const SIGN_BATCH = 2_000;
const SIGN_CHUNK = 250;
/** Node requests (broadcasts, dry runs) in flight at once. */
const NODE_CONCURRENCY = 24;
/** Finished transfers per transaction (after a failed batch: one per transaction). */
const FINISH_CHUNK = 1_000;

/** Where a test may stop a pass, as a crash would. */
export type ExecutorStep = 'after-sign' | 'after-broadcast' | 'before-finish' | 'inside-finish';

export interface ExecutorOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly chain: ChainName;
  readonly node: TronNodeClient;
  readonly signingKey: () => Promise<DepositSigningKey>;
  readonly hotWallet: TronAddress;
  /** The TRC20 USDT contract transfers call. */
  readonly usdtContract: TronAddress;
  readonly handlers: Partial<Record<OutgoingPurpose, OutgoingOutcomeHandler>>;
  /** micro-USDT per TRX: chain costs are booked at this rate. */
  readonly trxUsdtRateMicro: bigint;
  readonly maxInFlight: number;
  readonly maxAttempts: number;
  /** How long a transfer may wait for the sending address's funds before it fails. */
  readonly fundsWaitSeconds: number;
  /** Sandbox only: tops the hot wallet up on the simulated chain when it is short (docs/payouts.md). */
  readonly sandboxFaucet?: (address: TronAddress, amounts: { readonly trxSun: bigint; readonly usdt: bigint }) => Promise<void>;
  readonly leaderToken?: string;
  /** How long a leader's lease lasts without renewal; LEASE_MS by default. */
  readonly leaseMs?: number;
  /**
   * Run a USDT transfer as a constant call before signing it: a blacklisted party
   * then fails `address_blacklisted` without spending a fee, and the fee limit follows
   * the energy the call used. Default (undefined): only for a recipient no confirmed
   * transfer of this chain was ever sent to (one indexed look-up per pass; no node
   * request for known recipients). true: every USDT transfer; false: none (a
   * blacklisted recipient then costs one reverted transaction, classified after the fact).
   */
  readonly dryRunBeforeSigning?: boolean;
  /** The most energy one USDT transfer may take (PAYGATE_TRON_TRANSFER_ENERGY_MAX): above it the transfer waits, as for funds. */
  readonly transferEnergyMax?: bigint;
  /** The book's hourly outflow cap (outflow-cap.ts): transfers past it stay queued until the window allows them. Absent: no cap. */
  readonly outflowCap?: OutflowCap;
  /** Where transactions are signed: a worker-thread pool (signing-pool.ts; the caller closes it), or this thread (default). */
  readonly signing?: SigningPool;
  /** Whether this chain's signing is paused (custody reconciliation found a shortfall): queued transfers then wait, unsigned. */
  readonly signingPaused?: () => Promise<boolean>;
  /** TEST-ONLY: called (and awaited) at each step; throwing there stops the pass as a crash would, waiting there pauses it. */
  readonly onStep?: (step: ExecutorStep) => void | Promise<void>;
}

export interface ExecutorPassResult {
  readonly leader: boolean;
  signed: number;
  broadcast: number;
  rebroadcast: number;
  confirmed: number;
  failed: number;
  expiredAttempts: number;
  /** Transfers left queued because the sending address is short. */
  waitingForFunds: number;
  blocksScanned: number;
  /** Milliseconds per step of the pass (for the benchmark). */
  readonly timings: Record<string, number>;
}

export interface OutgoingExecutor {
  readonly leaderToken: string;
  runPass(): Promise<ExecutorPassResult>;
  release(): Promise<void>;
}

class LostLeadershipError extends Error {}

/** Broadcast answers that say the transaction can never be valid as signed, and what the transfer fails with once its attempts are proven dead. */
const REJECTION_OUTCOMES: Record<string, OutgoingErrorCode | 'retry'> = {
  // Our TaPoS block or expiration went stale before the node saw it: a new attempt can succeed.
  TAPOS_ERROR: 'retry',
  TRANSACTION_EXPIRATION_ERROR: 'retry',
  // The sender cannot pay (TRX for a transfer or its bandwidth, or does not exist).
  CONTRACT_VALIDATE_ERROR: 'insufficient_hot_wallet_funds',
  BANDWITH_ERROR: 'insufficient_hot_wallet_funds',
};

export function createOutgoingExecutor(options: ExecutorOptions): OutgoingExecutor {
  const { db, clock, node, chain, logger } = options;
  const token = options.leaderToken ?? randomUUID();
  const step = async (name: ExecutorStep) => {
    await options.onStep?.(name);
  };
  const purposes = OUTGOING_PURPOSES.filter((purpose) => options.handlers[purpose] !== undefined);
  // Every transaction this executor signs carries its own build time, strictly increasing: two transfers
  // alike in sender, recipient and amount, signed against the same block, would otherwise be the same bytes
  // and the same txID — the chain takes one (DUP_TRANSACTION_ERROR for the other) and the attempts' unique
  // txID would refuse the second. java-tron does not check `timestamp` (docs/tron.md §1.2: build time).
  let lastTimestampMs = 0;
  const nextTimestampMs = () => (lastTimestampMs = Math.max(clock.now().getTime(), lastTimestampMs + 1));
  const book = chain === 'tron-sandbox' ? 'sandbox' : 'live';
  const signer = options.signing ?? inThreadSigning;

  const renewLease = async () => {
    const now = clock.now();
    return repository.takeLease(db, chain, token, now, new Date(now.getTime() + (options.leaseMs ?? LEASE_MS)));
  };

  // ---- finishing a transfer: one transaction with the owner's handlers and the fee booking ----

  type Finish =
    | { readonly kind: 'outcome'; readonly transferId: string; readonly outcome: TransactionOutcome; blacklisted?: boolean }
    | {
        readonly kind: 'fail';
        readonly transferId: string;
        readonly code: OutgoingErrorCode;
        readonly message: string;
        readonly deadTxIds: readonly string[];
        /** The txID the transfer had when it was judged: a stale judgement (another executor signed since) fails nothing. */
        readonly judgedTxId: string | null;
      };

  /**
   * Finishes a batch of transfers in one transaction: their rows and attempts, the
   * fees booked (one ledger transfer for the batch: debit network_fees, credit network_costs),
   * and every owner's handler. A transfer already final is skipped.
   */
  async function applyFinishes(tx: Tx, finishes: readonly Finish[]): Promise<OutgoingTransferRow[]> {
    const locked = new Map((await repository.lockTransfers(tx, finishes.map((finish) => finish.transferId))).map((row) => [row.id, row]));
    const now = clock.now();
    const fields: repository.FinishedFields[] = [];
    const landed: string[] = [];
    const dead: string[] = [];
    const before = new Map<string, OutgoingTransferRow>();
    for (const finish of finishes) {
      const row = locked.get(finish.transferId);
      if (!row || row.status === 'confirmed' || row.status === 'failed' || before.has(row.id)) continue;
      if (finish.kind === 'fail' && row.tx_id !== finish.judgedTxId) continue;
      if (!options.handlers[row.purpose]) throw new Error(`outgoing transfer ${row.id}: no outcome handler for purpose ${row.purpose}`);
      before.set(row.id, row);
      if (finish.kind === 'outcome') {
        const { outcome } = finish;
        const code = outcome.succeeded ? null : finish.blacklisted ? 'address_blacklisted' : failureCode(outcome);
        landed.push(outcome.txId);
        fields.push({
          id: row.id,
          status: code === null ? 'confirmed' : 'failed',
          txId: outcome.txId,
          feeSun: outcome.feeSun,
          blockNumber: BigInt(outcome.blockNumber),
          errorCode: code,
          errorMessage: code === null ? null : (outcome.failureMessage ?? outcome.contractResult ?? 'failed on chain').slice(0, 1000),
          submittedAt: now,
        });
      } else {
        dead.push(...finish.deadTxIds);
        fields.push({ id: row.id, status: 'failed', txId: null, feeSun: 0n, blockNumber: null, errorCode: finish.code, errorMessage: finish.message.slice(0, 1000), submittedAt: null });
      }
    }
    await repository.setAttemptsStatus(tx, landed, 'landed');
    await repository.setAttemptsStatus(tx, dead, 'dead');
    const finals = await repository.finishTransfers(tx, fields, now);
    await bookChainCosts(tx, finals);
    for (const final of finals) {
      const row = before.get(final.id)!;
      const handler = options.handlers[row.purpose]!;
      // An owner that never heard of the submission hears of it first.
      if (row.submitted_at === null && final.tx_id !== null) await handler.onSubmitted?.(tx, clock, toOutgoingTransfer({ ...final, status: 'submitted', final_at: null }));
      await handler.onFinal(tx, clock, toOutgoingTransfer(final));
    }
    await step('inside-finish');
    return finals;
  }

  /** The fees the chain took, in micro-USDT at the configured rate (each rounded up): debit network_fees, credit network_costs. */
  async function bookChainCosts(tx: Tx, finals: readonly OutgoingTransferRow[]): Promise<void> {
    const micro = finals.reduce((sum, final) => sum + sunToMicroUsdt(final.fee_sun ?? 0n, options.trxUsdtRateMicro), 0n);
    if (micro <= 0n) return;
    const first = finals.map((final) => final.id).sort()[0]!;
    const shard = shardOf(first);
    const [costs, fees] = await ensureAccounts(tx, clock, [systemAccountKey(book, 'network_costs', 'USDT', shard), systemAccountKey(book, 'network_fees', 'USDT', shard)]);
    // One booking per finishing transaction; its id is the first transfer's, which becomes final only here.
    await ledgerTransfer(tx, clock, {
      id: `outgoing-fee:${first}`,
      debitAccountId: fees!.id,
      creditAccountId: costs!.id,
      amount: micro,
      type: 'network_fee',
      reference: { type: 'outgoing_transfer', id: first },
    });
  }

  /**
   * A REVERT of a transfer whose recipient the USDT contract lists (`isBlackListed`) failed
   * because of that recipient: `address_blacklisted`, a failure the transfer's owner may
   * charge its fee for (docs/payouts.md). A listed sender (the gateway's own address) is
   * not the recipient's doing: it stays `reverted`, logged as an error.
   */
  async function classifyReverts(finishes: readonly Finish[]): Promise<void> {
    const reverts = finishes.filter((finish): finish is Extract<Finish, { kind: 'outcome' }> => finish.kind === 'outcome' && finish.outcome.contractResult === 'REVERT');
    await forEachLimited(reverts, NODE_CONCURRENCY, async (finish) => {
      const row = await repository.findTransfer(db, finish.transferId);
      if (!row || row.asset !== 'USDT') return;
      if (await node.isUsdtBlacklisted(row.to_address as TronAddress)) {
        finish.blacklisted = true;
        return;
      }
      const from = row.from_kind === 'hot_wallet' ? options.hotWallet : (row.from_address as TronAddress);
      if (await node.isUsdtBlacklisted(from)) logger.error({ chain, transfer_id: row.id, address: from }, 'the USDT contract blacklisted a sending address of the gateway: its transfers revert');
    });
  }

  async function finishAll(finishes: readonly Finish[], result: ExecutorPassResult): Promise<void> {
    if (finishes.length === 0) return;
    await classifyReverts(finishes);
    await step('before-finish');
    const count = (finals: readonly OutgoingTransferRow[]) => {
      for (const final of finals) {
        if (final.status === 'confirmed') result.confirmed += 1;
        else result.failed += 1;
      }
    };
    for (let start = 0; start < finishes.length; start += FINISH_CHUNK) {
      const chunk = finishes.slice(start, start + FINISH_CHUNK);
      try {
        count(await inTransaction(db, (tx) => applyFinishes(tx, chunk)));
      } catch (error) {
        if (isStepCrash(error)) throw error;
        // One owner's handler failing must not hold up the rest: one per transaction, the failing one retried next pass.
        for (const finish of chunk) {
          try {
            count(await inTransaction(db, (tx) => applyFinishes(tx, [finish])));
          } catch (single) {
            if (isStepCrash(single)) throw single;
            logger.error({ err: single, chain, transfer_id: finish.transferId }, 'an outgoing transfer could not be finished');
          }
        }
      }
    }
  }

  // ---- 2. results of solidified blocks ----

  /** Reads the results of solidified blocks from the last position on; returns the block number read through, with no gap. */
  async function scanResults(solid: BlockHeader, result: ExecutorPassResult): Promise<number> {
    await repository.ensureLeaseRow(db, chain, clock.now());
    const lease = await repository.findLease(db, chain);
    const lowest = await repository.lowestPendingReference(db, chain);
    let from = lease?.scanned_block === null || lease?.scanned_block === undefined ? undefined : Number(lease.scanned_block) + 1;
    if (lowest === undefined) {
      // Nothing can land: no need to read anything up to here.
      if (!(await repository.setScannedBlock(db, chain, token, solid.number, clock.now()))) throw new LostLeadershipError();
      return solid.number;
    }
    // A transaction lands after the block it references; a position already past that stays (it was read).
    from ??= lowest + 1;
    const to = Math.min(solid.number, from + SCAN_BLOCKS_PER_PASS - 1);
    if (to < from) return from - 1;
    const numbers = Array.from({ length: to - from + 1 }, (_, index) => from + index);
    const byBlock = new Map<number, readonly TransactionOutcome[] | null>();
    // Blocks past the first gap are not asked for: the read stops there anyway.
    let firstGap = Infinity;
    await forEachLimited(numbers, SCAN_CONCURRENCY, async (number) => {
      if (number > firstGap) return;
      try {
        byBlock.set(number, await node.getSolidifiedBlockResults(number));
      } catch (error) {
        if (!(error instanceof TronNodeUnavailableError)) throw error;
        byBlock.set(number, null);
        firstGap = Math.min(firstGap, number);
      }
    });
    // A block no node could prove complete (each lacked it, kept no results, or gave results that do
    // not match it) is never stepped over: what landed in it would go unseen, and the expiry proof
    // counts on every block up to the solid one having been read. The read stops before it and
    // tries again next pass.
    const gap = numbers.find((number) => byBlock.get(number) === null || !byBlock.has(number));
    const through = gap === undefined ? to : gap - 1;
    if (gap !== undefined) logger.error({ chain, block: gap }, 'outgoing transfers: no node proved the results of this solidified block; results are read up to the block before it');
    const outcomes = numbers.filter((number) => number <= through).flatMap((number) => byBlock.get(number) ?? []);
    result.blocksScanned += through - from + 1;
    const attempts = await repository.pendingAttemptsByTxId(
      db,
      chain,
      outcomes.map((outcome) => outcome.txId),
    );
    const byTxId = new Map(outcomes.map((outcome) => [outcome.txId, outcome]));
    await finishAll(
      attempts.map((attempt) => ({ kind: 'outcome', transferId: attempt.transfer_id, outcome: byTxId.get(attempt.tx_id)! })),
      result,
    );
    if (through >= from && !(await repository.setScannedBlock(db, chain, token, through, clock.now()))) throw new LostLeadershipError();
    return through;
  }

  // ---- 3. expiry ----

  async function checkExpired(
    solid: BlockHeader,
    scannedThrough: number,
    inFlight: Awaited<ReturnType<typeof repository.inFlight>>,
    result: ExecutorPassResult,
  ): Promise<Set<string>> {
    // The proof that an expired transaction is not on chain: every solidified block up to this
    // solid one (whose time is past the expiration, so no later block can include it) has been
    // read without a gap and did not hold it. Until the scan has caught up, nothing is judged.
    if (scannedThrough < solid.number) return new Set();
    const expired = inFlight.filter((row) => row.attempt_expiration.getTime() < solid.timestamp);
    const handled = new Set<string>();
    const finishes: Finish[] = [];
    await forEachLimited(expired, NODE_CONCURRENCY, async (row) => {
      const attempts = await repository.attemptsOf(db, row.id);
      // Every txID this transfer ever had, not only the current one: any of them landing means it was
      // sent. Absence needs the word of two different nodes when two are configured (one lagging,
      // history-less or lying node alone cannot make it sign again); a node that cannot answer
      // leaves the transfer for the next pass.
      for (const attempt of attempts) {
        let answers;
        try {
          answers = await node.getSolidifiedOutcomeOnNodes(attempt.tx_id, { upTo: ABSENCE_WITNESSES });
        } catch (error) {
          if (!(error instanceof TronNodeUnavailableError)) throw error;
          logger.error({ chain, transfer_id: row.id, tx_id: attempt.tx_id, err: error }, 'an expired outgoing transaction could not be looked up on enough nodes: no new one is signed yet');
          handled.add(row.id);
          return;
        }
        if (answers === null) throw new Error('the node client answered no nodes for a look-up sized to its own');
        const outcome = answers.find((answer) => answer !== null);
        if (outcome) {
          finishes.push({ kind: 'outcome', transferId: row.id, outcome });
          handled.add(row.id);
          return;
        }
      }
      handled.add(row.id);
      result.expiredAttempts += 1;
      const pending = attempts.filter((attempt) => attempt.status === 'pending').map((attempt) => attempt.tx_id);
      const rejection = row.attempt_last_broadcast?.startsWith('rejected:') ? row.attempt_last_broadcast.slice('rejected:'.length) : undefined;
      const decided = rejection === undefined ? 'retry' : (REJECTION_OUTCOMES[rejection] ?? 'rejected');
      if (decided !== 'retry') {
        finishes.push({ kind: 'fail', transferId: row.id, code: decided, message: `the node refused the transaction: ${rejection}`, deadTxIds: pending, judgedTxId: row.tx_id });
      } else if (row.attempts >= options.maxAttempts) {
        finishes.push({ kind: 'fail', transferId: row.id, code: 'expired', message: `none of its ${row.attempts} signed transactions reached the chain before expiring`, deadTxIds: pending, judgedTxId: row.tx_id });
      } else {
        await inTransaction(db, async (tx) => {
          const locked = await repository.lockTransfer(tx, row.id);
          if (!locked || locked.tx_id !== row.tx_id || (locked.status !== 'queued' && locked.status !== 'submitted')) return;
          await repository.setAttemptStatus(tx, row.id, pending, 'dead');
          await repository.requeue(tx, row.id, clock.now());
        });
        logger.warn({ chain, transfer_id: row.id, tx_id: row.tx_id, attempt: row.attempts }, 'outgoing transaction expired without reaching the chain: signing a new one');
      }
    });
    await finishAll(finishes, result);
    return handled;
  }

  // ---- 4. re-broadcast ----

  async function rebroadcast(head: BlockHeader, inFlight: Awaited<ReturnType<typeof repository.inFlight>>, skip: Set<string>, result: ExecutorPassResult): Promise<void> {
    const due = inFlight.filter(
      (row) =>
        !skip.has(row.id) &&
        row.attempt_expiration.getTime() > head.timestamp &&
        (row.attempt_last_broadcast === null || row.attempt_last_broadcast === 'unknown'),
    );
    const hexes = await repository.signedHexOf(
      db,
      due.map((row) => row.tx_id!),
    );
    await broadcastAll(
      due.map((row) => ({ transfer: row, txId: row.tx_id!, hex: hexes.get(row.tx_id!)! })),
      result,
    );
    result.rebroadcast += due.length;
  }

  async function broadcastAll(items: readonly { transfer: OutgoingTransferRow; txId: string; hex: string }[], result: ExecutorPassResult): Promise<void> {
    const answers: { item: (typeof items)[number]; answer: BroadcastResult }[] = [];
    await forEachLimited(items, NODE_CONCURRENCY, async (item) => {
      answers.push({ item, answer: await node.broadcast({ txId: item.txId, hex: item.hex }) });
    });
    await step('after-broadcast');
    const now = clock.now();
    await repository.recordBroadcasts(
      db,
      answers.map(({ item, answer }) => ({ txId: item.txId, answer: answer.kind === 'rejected' ? `rejected:${answer.code}` : answer.kind })),
      now,
    );
    for (const { item, answer } of answers) {
      if (answer.kind === 'rejected') logger.warn({ chain, transfer_id: item.transfer.id, tx_id: item.txId, code: answer.code, message: answer.message }, 'outgoing transaction refused by the node');
      if (answer.kind === 'unknown') logger.warn({ chain, transfer_id: item.transfer.id, tx_id: item.txId, detail: answer.detail }, 'outgoing broadcast result unknown: the same bytes go again');
    }
    result.broadcast += items.length;
    const submitted = answers.filter(({ item, answer }) => (answer.kind === 'accepted' || answer.kind === 'duplicate') && item.transfer.status === 'queued');
    for (let start = 0; start < submitted.length; start += FINISH_CHUNK) {
      const chunk = submitted.slice(start, start + FINISH_CHUNK);
      await inTransaction(db, async (tx) => {
        const rows = await repository.markSubmittedMany(
          tx,
          chunk.map(({ item }) => ({ id: item.transfer.id, txId: item.txId })),
          clock.now(),
        );
        const firstTime = new Set(chunk.filter(({ item }) => item.transfer.submitted_at === null).map(({ item }) => item.transfer.id));
        // The owner hears once, at the first submission (a re-signed transfer was submitted before).
        for (const row of rows) if (firstTime.has(row.id)) await options.handlers[row.purpose]?.onSubmitted?.(tx, clock, toOutgoingTransfer(row));
      });
    }
  }

  // ---- 5. signing ----

  /** The USDT transfers to run as a constant call first: every one, none, or (default) those to a recipient never confirmed on this chain. */
  async function rowsToDryRun(usdtRows: readonly OutgoingTransferRow[]): Promise<readonly OutgoingTransferRow[]> {
    if (options.dryRunBeforeSigning === false || usdtRows.length === 0) return [];
    if (options.dryRunBeforeSigning === true) return usdtRows;
    const known = await repository.confirmedRecipients(db, chain, [...new Set(usdtRows.map((row) => row.to_address))]);
    return usdtRows.filter((row) => !known.has(row.to_address));
  }

  interface Balances {
    usdt: bigint;
    trxSun: bigint;
    energy: bigint;
  }

  async function sign(
    head: BlockHeader,
    solid: BlockHeader,
    inFlightRows: Awaited<ReturnType<typeof repository.inFlight>>,
    result: ExecutorPassResult,
    lap: (name: string) => void = () => undefined,
  ): Promise<void> {
    if (await options.signingPaused?.()) return;
    const room = Math.min(SIGN_BATCH, options.maxInFlight - (await repository.countInFlight(db, chain)));
    const unsigned = await repository.queuedUnsigned(db, chain, purposes, room);
    const queued = options.outflowCap ? await options.outflowCap.admit(unsigned, clock.now()) : unsigned;
    if (queued.length === 0) return;
    const prices = await node.getChainPrices();
    let key: DepositSigningKey;
    try {
      key = await options.signingKey();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      // Nothing can be signed until an operator sets the key and restarts: the transfers wait as for funds,
      // then fail, so their owners' reservations are voided instead of staying reserved for ever.
      logger.error({ chain, err: error }, 'outgoing transfers cannot be signed: the signing key is not configured');
      // Only transfers that hold a merchant's money reserved fail; sweeps and their top-ups (the gateway's
      // own housekeeping) just stay queued, so a keyless spell does not count as failed sweeps.
      const reserving = queued.filter((row) => row.purpose === 'payout' || row.purpose === 'refund' || row.purpose === 'withdrawal');
      await handleWaiting(reserving, clock.now(), result, { code: 'signer_unavailable', message: `the gateway could not sign: ${error.message}` });
      return;
    }

    // A USDT transfer's energy is the chain's figure (transfer-energy.ts): the dear case (a recipient
    // without USDT) at the contract's energy factor now, measured once per factor on a fresh address.
    const energyModel = usdtTransferEnergy(node);
    const ceiling = options.transferEnergyMax ?? TRANSFER_ENERGY_MAX_DEFAULT;
    const needsUsdtEnergy = queued.some((row) => row.asset === 'USDT') || inFlightRows.some((row) => row.asset === 'USDT');
    const dearEnergy = needsUsdtEnergy ? await energyModel.energyOf(clock, { from: options.hotWallet, to: freshRecipient(), recipientHoldsUsdt: false }) : 0n;

    // What each sending address holds, less what its transfers in flight will still take (read once per pass).
    const balances = new Map<string, Balances>();
    const balanceOf = async (address: TronAddress): Promise<Balances> => {
      let known = balances.get(address);
      if (!known) {
        const [account, usdt, resources] = await Promise.all([node.getAccount(address), node.getUsdtBalance(address), node.getAccountResources(address)]);
        known = { usdt, trxSun: account.balanceSun, energy: BigInt(resources.energyAvailable) };
        for (const row of inFlightRows) {
          if (sourceOf(row) !== address) continue;
          if (row.asset === 'USDT') known.usdt -= row.amount;
          else known.trxSun -= row.amount;
          known.trxSun -= row.asset === 'USDT' ? dearEnergy * prices.energyPriceSun : 0n;
        }
        balances.set(address, known);
      }
      return known;
    };
    const holders = new Map<string, Promise<boolean>>();
    const recipientHoldsUsdt = (address: TronAddress): Promise<boolean> => {
      let known = holders.get(address);
      if (!known) holders.set(address, (known = node.getUsdtBalance(address).then((usdt) => usdt > 0n)));
      return known;
    };
    const sourceOf = (row: OutgoingTransferRow): TronAddress => (row.from_kind === 'hot_wallet' ? options.hotWallet : (row.from_address as TronAddress));

    if (options.sandboxFaucet) {
      const need = queued.filter((row) => row.from_kind === 'hot_wallet');
      const usdt = need.filter((row) => row.asset === 'USDT').reduce((sum, row) => sum + row.amount, 0n);
      const trx = need.reduce((sum, row) => sum + (row.asset === 'TRX' ? row.amount : 0n) + 20_000_000n, 0n);
      const hot = await balanceOf(options.hotWallet);
      if (hot.usdt < usdt || hot.trxSun < trx) {
        const topUsdt = hot.usdt < usdt ? usdt - hot.usdt + 1_000_000_000n : 0n;
        const topTrx = hot.trxSun < trx ? trx - hot.trxSun + 10_000_000_000n : 0n;
        await options.sandboxFaucet(options.hotWallet, { trxSun: topTrx, usdt: topUsdt });
        hot.usdt += topUsdt;
        hot.trxSun += topTrx;
        logger.info({ chain, address: options.hotWallet, usdt: topUsdt.toString(), trx_sun: topTrx.toString() }, 'sandbox hot wallet topped up from the simulated chain faucet');
      }
    }

    const now = clock.now();
    const refFields = referenceBlockFields(solid.number, solid.id);
    const expirationMs = head.timestamp + EXPIRATION_MS;
    const short: OutgoingTransferRow[] = [];
    const aboveCeiling: OutgoingTransferRow[] = [];
    const failures: Finish[] = [];

    // Dry runs (USDT): a refused recipient (blacklisted) fails before any fee is spent; the energy sets the fee limit.
    const dryRuns = new Map<string, { ok: true; energy: number } | { ok: false; message: string }>();
    await forEachLimited(
      await rowsToDryRun(queued.filter((row) => row.asset === 'USDT')),
      NODE_CONCURRENCY,
      async (row) => {
        const from = sourceOf(row);
        const balance = await balanceOf(from);
        // Only when the sender has the USDT: otherwise the dry run fails for that, and the wait below applies.
        if (balance.usdt >= row.amount) dryRuns.set(row.id, await node.dryRunUsdtTransfer(from, row.to_address as TronAddress, row.amount));
      },
    );

    // Decide first (funds, fee limit), then sign, commit and broadcast chunk by chunk: the
    // node checks one chunk while the next is signed.
    const toSign: { row: OutgoingTransferRow; from: TronAddress; feeLimit: bigint }[] = [];
    for (const row of queued) {
      const from = sourceOf(row);
      const balance = await balanceOf(from);
      const dry = dryRuns.get(row.id);
      if (dry && !dry.ok) {
        failures.push({ kind: 'fail', transferId: row.id, code: 'address_blacklisted', message: `the USDT contract refuses this transfer (${dry.message}): the recipient or sender is blacklisted`, deadTxIds: [], judgedTxId: row.tx_id });
        continue;
      }
      const bandwidth = row.asset === 'USDT' ? USDT_TRANSFER_BANDWIDTH : TRX_TRANSFER_BANDWIDTH;
      const needsOf = (energy: bigint) => {
        const burnedEnergy = energy > balance.energy ? energy - balance.energy : 0n;
        const costSun = burnedEnergy * prices.energyPriceSun + bandwidth * prices.bandwidthPriceSun + (row.asset === 'TRX' ? prices.createNewAccountFeeSun + prices.createAccountFeeSun : 0n);
        return { energy, burnedEnergy, needUsdt: row.asset === 'USDT' ? row.amount : 0n, needTrx: costSun + (row.asset === 'TRX' ? row.amount : 0n) };
      };
      const fits = (needs: ReturnType<typeof needsOf>) => balance.usdt >= needs.needUsdt && balance.trxSun >= needs.needTrx;
      // Without a dry run, the dear case (a recipient without USDT) first; only when that does not fit is the
      // recipient asked (a sweep to a hot wallet holding USDT is topped up for exactly the cheaper case).
      let needs = needsOf(row.asset === 'USDT' ? (dry?.ok ? BigInt(dry.energy) : dearEnergy) : 0n);
      if (!fits(needs) && row.asset === 'USDT' && !dry && balance.usdt >= row.amount && (await recipientHoldsUsdt(row.to_address as TronAddress))) {
        needs = needsOf(await energyModel.energyOf(clock, { from, to: row.to_address as TronAddress, recipientHoldsUsdt: true }));
      }
      const { energy, burnedEnergy, needUsdt, needTrx } = needs;
      if (energy > ceiling) {
        aboveCeiling.push(row);
        continue;
      }
      if (!fits(needs)) {
        short.push(row);
        continue;
      }
      balance.usdt -= needUsdt;
      balance.trxSun -= needTrx;
      balance.energy -= energy - burnedEnergy;
      const feeLimit = row.asset === 'USDT' ? feeLimitFor(energy, prices.energyPriceSun) : 0n;
      toSign.push({ row, from, feeLimit });
    }
    lap('sign-prepare');
    await finishAll(failures, result);
    await handleWaiting(short, now, result, { code: 'insufficient_hot_wallet_funds', message: 'the sending address was short of USDT or TRX' });
    if (aboveCeiling.length > 0) logger.error({ chain, waiting: aboveCeiling.length, dear_energy: dearEnergy.toString(), ceiling: ceiling.toString() }, 'USDT transfers wait: their energy on chain is above PAYGATE_TRON_TRANSFER_ENERGY_MAX');
    await handleWaiting(aboveCeiling, now, result, { code: 'rejected', message: `the transfer's energy on chain stayed above the ceiling of ${ceiling} (PAYGATE_TRON_TRANSFER_ENERGY_MAX)` });

    // One private key per sending address per pass (derivation and its check are not free).
    const keys = new Map<string, Uint8Array>();
    const privateKeyOf = (row: OutgoingTransferRow, from: TronAddress): Uint8Array => {
      let privateKey = keys.get(from);
      if (!privateKey) {
        privateKey = row.from_kind === 'hot_wallet' ? key.hotWalletPrivateKey() : key.privateKey(Number(row.from_derivation_index));
        if (tronAddressFromPrivateKey(privateKey) !== from) throw new Error(`outgoing transfer ${row.id}: the signing key does not derive ${from}`);
        keys.set(from, privateKey);
      }
      return privateKey;
    };
    const common = { ...refFields, expirationMs };
    const broadcasts: Promise<void>[] = [];
    try {
      for (let start = 0; start < toSign.length; start += SIGN_CHUNK) {
        // Encoded here, not through signTriggerSmartContract / signTransferContract: those derive the public
        // key again for every transaction (a third of signing's cost); privateKeyOf checked it once per pass.
        const prepared = toSign.slice(start, start + SIGN_CHUNK).map(({ row, from, feeLimit }) => {
          const timestampMs = nextTimestampMs();
          const rawBytes =
            row.asset === 'USDT'
              ? encodeTriggerSmartContractRaw({ ...common, timestampMs, ownerAddress: from, feeLimitSun: feeLimit, contractAddress: options.usdtContract, data: transferCalldata(row.to_address as TronAddress, row.amount) })
              : encodeTransferContractRaw({ ...common, timestampMs, ownerAddress: from, toAddress: row.to_address as TronAddress, amountSun: row.amount });
          return { row, feeLimit, privateKey: privateKeyOf(row, from), rawBytes, txId: transactionId(rawBytes) };
        });
        // Signed by key (the hot wallet's, a sweep's deposit address's), on the signing pool when there is one:
        // the previous chunk's broadcasts progress meanwhile.
        const byKey = new Map<Uint8Array, number[]>();
        for (const [index, item] of prepared.entries()) {
          const indexes = byKey.get(item.privateKey);
          if (indexes) indexes.push(index);
          else byKey.set(item.privateKey, [index]);
        }
        const signatures: Uint8Array[] = [];
        await Promise.all(
          [...byKey].map(async ([privateKey, indexes]) => {
            const made = await signer.sign(
              privateKey,
              indexes.map((index) => prepared[index]!.txId),
            );
            for (const [position, index] of indexes.entries()) signatures[index] = made[position]!;
          }),
        );
        const signed = prepared.map((item, index) => ({
          transfer: item.row,
          txId: item.txId,
          hex: bytesToHex(encodeSignedTransaction(item.rawBytes, [signatures[index]!])),
          feeLimit: item.feeLimit,
        }));
        // Bytes, txID and expiration are committed before the first broadcast; the outflow cap decides again in that transaction.
        const claimed = await inTransaction(db, async (tx) => {
          const allowed = await options.outflowCap?.claim(tx, signed.map((item) => item.transfer), now);
          const ids = await repository.recordSignedAttempts(
            tx,
            signed.filter((item) => allowed?.has(item.transfer.id) ?? true).map((item) => ({ id: item.transfer.id, attempts: item.transfer.attempts, txId: item.txId, signedHex: item.hex, feeLimitSun: item.feeLimit })),
            { expiration: new Date(expirationMs), refBlockNumber: solid.number, signedAt: now },
          );
          await options.outflowCap?.record(tx, signed.filter((item) => ids.has(item.transfer.id)).map((item) => item.transfer), now);
          return ids;
        });
        const committed = signed.filter((item) => claimed.has(item.transfer.id));
        result.signed += committed.length;
        await step('after-sign');
        broadcasts.push(broadcastAll(committed, result));
      }
    } finally {
      // A crash between chunks still waits for the broadcasts already under way (their answers are recorded).
      const settled = await Promise.allSettled(broadcasts);
      lap('sign-and-broadcast');
      const failed = settled.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
    }
  }

  /**
   * Transfers that cannot be signed now (the sender short of funds, no signing key): each stays queued
   * (a warning) fundsWaitSeconds from the pass that first saw it so, then fails with `reason`.
   */
  async function handleWaiting(
    short: readonly OutgoingTransferRow[],
    now: Date,
    result: ExecutorPassResult,
    reason: { readonly code: 'insufficient_hot_wallet_funds' | 'signer_unavailable' | 'rejected'; readonly message: string },
  ): Promise<void> {
    if (short.length === 0) return;
    const waitMs = options.fundsWaitSeconds * 1000;
    const overdue = short.filter((row) => row.short_of_funds_since !== null && now.getTime() - row.short_of_funds_since.getTime() >= waitMs);
    const waiting = short.filter((row) => !overdue.includes(row));
    await repository.setShortOfFunds(
      db,
      waiting.map((row) => row.id),
      now,
    );
    result.waitingForFunds += waiting.length;
    logger.warn({ chain, waiting: waiting.length, failing: overdue.length, reason: reason.code }, 'outgoing transfers wait: they cannot be signed now');
    await finishAll(
      overdue.map((row) => ({
        kind: 'fail',
        transferId: row.id,
        code: reason.code,
        message: `${reason.message} for ${options.fundsWaitSeconds} s`,
        deadTxIds: [],
        judgedTxId: row.tx_id,
      })),
      result,
    );
    // A zero wait fails at once: the first sighting counts as the whole wait.
    if (waitMs === 0) {
      await finishAll(
        waiting.map((row) => ({ kind: 'fail', transferId: row.id, code: reason.code, message: reason.message, deadTxIds: [], judgedTxId: row.tx_id })),
        result,
      );
    }
  }

  async function runPass(): Promise<ExecutorPassResult> {
    const result: ExecutorPassResult = { leader: false, signed: 0, broadcast: 0, rebroadcast: 0, confirmed: 0, failed: 0, expiredAttempts: 0, waitingForFunds: 0, blocksScanned: 0, timings: {} };
    await repository.ensureLeaseRow(db, chain, clock.now());
    if (!(await renewLease())) return result;
    try {
      // The head (expirations count from it) is the newest of two nodes: one lagging node's head would
      // give transactions an expiration already close, or past, when they reach the chain.
      const [head, solid] = await Promise.all([node.getNewestHeadBlock(HEAD_WITNESSES), node.getSolidifiedBlock()]);
      const mutable = result as { leader: boolean };
      mutable.leader = true;
      let mark = performance.now();
      const lap = (name: string) => {
        const now = performance.now();
        result.timings[name] = now - mark;
        mark = now;
      };
      const scannedThrough = await scanResults(solid, result);
      lap('results');
      const inFlightBefore = await repository.inFlight(db, chain);
      const handled = await checkExpired(solid, scannedThrough, inFlightBefore, result);
      lap('expiry');
      await rebroadcast(head, inFlightBefore, handled, result);
      lap('rebroadcast');
      if (!(await renewLease())) throw new LostLeadershipError();
      await sign(head, solid, await repository.inFlight(db, chain), result, lap);
    } catch (error) {
      if (error instanceof LostLeadershipError) return result;
      throw error;
    }
    return result;
  }

  return {
    leaderToken: token,
    runPass,
    release: () => repository.releaseLease(db, chain, token),
  };
}

function failureCode(outcome: TransactionOutcome): OutgoingErrorCode {
  if (outcome.contractResult === 'OUT_OF_ENERGY') return 'out_of_energy';
  if (outcome.contractResult === 'REVERT') return 'reverted';
  return 'rejected';
}

/** TEST-ONLY: what a test's onStep throws to stop a pass as a crash would (never swallowed by the per-transfer fallback). */
export class ExecutorStepCrash extends Error {
  override readonly name = 'ExecutorStepCrash';
}

function isStepCrash(error: unknown): boolean {
  return error instanceof ExecutorStepCrash;
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next]!;
      next += 1;
      await work(item);
    }
  });
  await Promise.all(runners);
}
