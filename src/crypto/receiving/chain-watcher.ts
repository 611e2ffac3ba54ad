// The chain watcher of one chain. One pass:
//  1. leadership: take or renew the lease on the chain's cursor row (one
//     watcher scans at a time; a crashed leader's lease runs out); then the
//     node's solidified block, read once: the pass settles up to it;
//  2. scan from the cursor with the node client, 1 block first, then 2, 4, at
//     most SCAN_BATCH_BLOCKS at a time; the first block's parent must be the
//     cursor's block, otherwise the chain reorganised: walk back to the newest
//     block we and the node agree on, orphan the deposits above it and move the
//     cursor there;
//  3. record each batch's deposits and move the cursor past it in ONE
//     transaction (compare-and-set on the cursor: a watcher that lost its
//     lease writes nothing), so a crash at any point repeats at most a batch,
//     and deposits are unique by (tx_id, log_index) anyway;
//  4. settle every confirming deposit whose block is at or below the
//     solidified block and that has the confirmation a credit requires
//     (deposit-confirmation.ts: a second node, or its own signed calldata;
//     without it, `unconfirmed`), once the node's block there is the one we recorded
//     (a batch of deposits per transaction, settled in sets; after a failed
//     batch, one deposit per transaction; the ledger ids are the deposit's):
//     after each recorded batch, beside the next one's scan, and once more at
//     the end of the pass.
// A deposit is a pending ledger credit from when it is recorded to when it is
// final (posted) or orphaned (voided): see deposit-credits.ts.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db } from '../../db/transaction.ts';
import type { BlockHeader, ScannedBlock } from '../tron/node-client.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { recordScannedTransfers } from './deposit-recording.ts';
import { voidDepositCredits } from './deposit-credits.ts';
import { confirmFinalDeposits } from './deposit-confirmation.ts';
import { holdUnconfirmedDeposits, settleFinalDeposits } from './deposit-settlement.ts';
import { emitWalletDeposit } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';

/** The most blocks per scan (and per recording transaction); a pass starts with 1 and doubles. */
const SCAN_BATCH_BLOCKS = 5;
/** Batches per pass: a pass stays bounded while catching up; the next one continues. */
const SCAN_BATCHES_PER_PASS_MAX = 50;
/** A new cursor starts this far below the solidified block, so recent deposits are not missed. */
const INITIAL_LOOKBACK_BLOCKS = 100;
/** The deepest reorganisation walked back (TRON never rolls back a solidified block: 18 deep). */
const REWIND_BLOCKS_MAX = 1_000;
/** Block ids kept below the final block, for walking back. */
const SCANNED_BLOCKS_KEPT_BELOW_FINAL = 100;
export const LEASE_MS = 30_000;
/** Deposits settled per transaction: one commit for many credits. */
const SETTLE_BATCH = 500;
const SETTLE_BATCHES_PER_PASS_MAX = 50;

/** Where a test may stop a pass, as a crash would (every step is its own transaction). */
export type WatcherStep = 'after-scan' | 'inside-record' | 'after-record' | 'before-settle' | 'inside-settle';

export interface ChainWatcherOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly access: ChainAccess;
  /** Identifies this watcher's lease; random by default. */
  readonly leaderToken?: string;
  /** TEST-ONLY: called at each step; throwing there stops the pass as a crash would. */
  readonly onStep?: (step: WatcherStep) => void;
}

interface WatcherPassResult {
  /** false: another watcher holds the lease; nothing was done. */
  readonly leader: boolean;
  readonly blocksScanned: number;
  readonly depositsSeen: number;
  readonly depositsSettled: number;
  readonly reorganisations: number;
}

export interface ChainWatcher {
  readonly leaderToken: string;
  runPass(): Promise<WatcherPassResult>;
  /** Gives up the lease (a clean stop), so another watcher takes over at once. */
  release(): Promise<void>;
}

class LostLeadershipError extends Error {}

export function createChainWatcher(options: ChainWatcherOptions): ChainWatcher {
  const { db, clock, access } = options;
  const chain = access.chain;
  const token = options.leaderToken ?? randomUUID();
  const step = (name: WatcherStep) => options.onStep?.(name);
  const renewLease = () =>
    repository.takeLease(db, chain, token, clock.now(), new Date(clock.now().getTime() + LEASE_MS));

  async function ensureCursor(): Promise<void> {
    if (await repository.findCursor(db, chain)) return;
    const solid = await access.node.getSolidifiedBlock();
    const startNumber = Math.max(0, solid.number - INITIAL_LOOKBACK_BLOCKS);
    const start = startNumber === solid.number ? solid : await access.node.getBlock(startNumber);
    if (!start) throw new Error(`${chain}: the node has no block ${startNumber}`);
    await inTransaction(db, async (tx) => {
      await repository.insertCursorIfMissing(tx, {
        chain,
        block_number: BigInt(start.number),
        block_id: start.id,
        leader_token: null,
        lease_until: null,
        updated_at: clock.now(),
      });
      const cursor = (await repository.findCursor(tx, chain))!;
      await repository.insertScannedBlocks(tx, chain, [{ number: Number(cursor.block_number), id: cursor.block_id }]);
    });
  }

  /** Moves the cursor back to `target`, orphaning the confirming deposits above `orphanAbove` (one transaction). */
  async function moveBack(
    position: { blockNumber: number; blockId: string },
    target: { blockNumber: number; blockId: string },
    orphanAbove: number,
  ): Promise<number> {
    movedBack = true;
    return inTransaction(db, async (tx) => {
      const deposits = await repository.orphanDepositsAbove(tx, chain, orphanAbove);
      await repository.forgetIgnoredDepositsAbove(tx, chain, orphanAbove);
      await repository.deleteScannedBlocks(tx, chain, { above: orphanAbove });
      await repository.insertScannedBlocks(tx, chain, [{ number: target.blockNumber, id: target.blockId }]);
      if (!(await repository.advanceCursor(tx, chain, token, position, target, clock.now())))
        throw new LostLeadershipError();
      // Their pending credits go: the merchant's pending balance no longer counts them.
      await voidDepositCredits(tx, clock, deposits);
      for (const deposit of deposits) {
        const wallet = deposit.wallet_id === null ? undefined : await repository.findWalletById(tx, deposit.wallet_id);
        if (wallet) await emitWalletDeposit(tx, clock, wallet, deposit);
      }
      return deposits.length;
    });
  }

  /**
   * The sandbox chain was replaced (its saved file lost while the database was kept): nothing we
   * recorded exists any more. Start over from its current blocks; unsettled deposits are orphaned.
   * Never done for the live chain, where it would mean a node on another network: that stops the watcher.
   */
  async function restartOnReplacedSandbox(position: { blockNumber: number; blockId: string }): Promise<void> {
    const solid = await access.node.getSolidifiedBlock();
    const startNumber = Math.max(0, solid.number - INITIAL_LOOKBACK_BLOCKS);
    const start = startNumber === solid.number ? solid : await access.node.getBlock(startNumber);
    if (!start) throw new Error(`${chain}: the node has no block ${startNumber}`);
    const orphaned = await moveBack(position, { blockNumber: start.number, blockId: start.id }, -1);
    options.logger.warn(
      { chain, from: position.blockNumber, to: start.number, orphaned },
      'the sandbox chain was replaced: watching it from its current blocks',
    );
  }

  /** Walks back from `position` to the newest block the node still has; orphans what lay above it. */
  async function rewind(position: { blockNumber: number; blockId: string }): Promise<void> {
    const lowest = Math.max(0, position.blockNumber - REWIND_BLOCKS_MAX);
    for (let number = position.blockNumber - 1; number >= lowest; number -= 1) {
      const ours = await repository.scannedBlockId(db, chain, number);
      if (ours === undefined) break;
      const theirs = await access.node.getBlock(number);
      if (theirs?.id !== ours) continue;
      const orphaned = await moveBack(position, { blockNumber: number, blockId: ours }, number);
      options.logger.warn(
        { chain, from: position.blockNumber, to: number, orphaned },
        'chain reorganisation: cursor moved back',
      );
      return;
    }
    if (chain === 'tron-sandbox') return restartOnReplacedSandbox(position);
    throw new Error(
      `${chain}: reorganisation deeper than the recorded blocks below ${position.blockNumber}; the node may be on another chain`,
    );
  }

  async function scan(result: { blocksScanned: number; depositsSeen: number; reorganisations: number }): Promise<void> {
    const head = await access.node.getHeadBlock();
    // The next batch is fetched from the node while this one is recorded; used only if it starts where the cursor then is.
    let prefetched: { from: number; blocks: Promise<ScannedBlock[]> } | undefined;
    // A pass starts with one block and doubles up to SCAN_BATCH_BLOCKS: the first recording (and the
    // settling that waits for it) starts after one block's fetch, not a whole batch's.
    const fetchBlocks = (from: number, batch: number) => {
      const blocks = access.node.scanBlocks(from, Math.min(SCAN_BATCH_BLOCKS, 2 ** batch, head.number - from + 1));
      blocks.catch(() => undefined); // awaited (and thrown) only when used
      return { from, blocks };
    };
    for (let batch = 0; batch < SCAN_BATCHES_PER_PASS_MAX; batch += 1) {
      const cursor = (await repository.findCursor(db, chain))!;
      const position = { blockNumber: Number(cursor.block_number), blockId: cursor.block_id };
      if (position.blockNumber >= head.number) {
        // Our own in-process chain never lags: at or past its head with another block there, it was replaced.
        if (chain === 'tron-sandbox' && (await access.node.getBlock(position.blockNumber))?.id !== position.blockId) {
          await restartOnReplacedSandbox(position);
          result.reorganisations += 1;
        }
        return;
      }
      const fetch =
        prefetched?.from === position.blockNumber + 1 ? prefetched : fetchBlocks(position.blockNumber + 1, batch);
      prefetched = undefined;
      const blocks = await fetch.blocks;
      if (blocks.length === 0) return;
      step('after-scan');
      if (blocks[0]!.header.parentId !== position.blockId) {
        await rewind(position);
        result.reorganisations += 1;
        continue;
      }
      const last = blocks.at(-1)!.header;
      if (last.number < head.number && batch + 1 < SCAN_BATCHES_PER_PASS_MAX)
        prefetched = fetchBlocks(last.number + 1, batch + 1);
      const recorded = await inTransaction(db, async (tx) => {
        const seen = await recordScannedTransfers(tx, clock, chain, access.keyId, blocks);
        await repository.insertScannedBlocks(
          tx,
          chain,
          blocks.map((block) => ({ number: block.header.number, id: block.header.id })),
        );
        step('inside-record');
        if (
          !(await repository.advanceCursor(
            tx,
            chain,
            token,
            position,
            { blockNumber: last.number, blockId: last.id },
            clock.now(),
          ))
        )
          throw new LostLeadershipError();
        return seen;
      });
      step('after-record');
      onRecorded?.();
      result.blocksScanned += blocks.length;
      result.depositsSeen += recorded.seen;
      if (!(await renewLease())) throw new LostLeadershipError();
    }
  }

  /** Set while a pass scans: wakes the settling beside it after each recorded batch. */
  let onRecorded: (() => void) | undefined;

  /** After a settlement batch failed: settle one deposit per transaction, so one bad deposit cannot hold up the rest. */
  let settleSingly = false;

  async function settleBatch(ids: readonly string[]): Promise<number> {
    return inTransaction(db, async (tx) => {
      const applied = await settleFinalDeposits(tx, clock, ids);
      step('inside-settle');
      return applied;
    });
  }

  async function settleOneByOne(ids: readonly string[]): Promise<number> {
    let applied = 0;
    for (const id of ids) {
      try {
        applied += await settleBatch([id]);
      } catch (error) {
        // Left confirming: retried next pass, and reported until someone looks.
        options.logger.error({ err: error, chain, deposit_id: id }, 'a final deposit could not be settled');
      }
    }
    return applied;
  }

  /**
   * Set when the pass moved the cursor back (a reorganisation, a replaced sandbox chain): the
   * solidified block read at its start may then name another branch, so the pass settles no more.
   */
  let movedBack = false;

  /**
   * Settles what is final up to `solid` (the pass's solidified block, read at its start). The
   * pass's last settlement (`prune`) also forgets the block ids far below the final block.
   */
  async function settle(solid: BlockHeader, prune = false): Promise<number> {
    if (movedBack) return 0;
    const cursor = (await repository.findCursor(db, chain))!;
    const finalNumber = Math.min(solid.number, Number(cursor.block_number));
    // Final only if the node's block there is the one we followed: then everything we recorded below it is canonical.
    const ours = await repository.scannedBlockId(db, chain, finalNumber);
    // Asked every time, even for blocks this pass fetched: with several nodes (or one URL in front of
    // several), the block may have come from a node on another branch than the one that named `solid`.
    const theirs = finalNumber === solid.number ? solid.id : (await access.node.getBlock(finalNumber))?.id;
    if (ours === undefined || ours !== theirs) return 0;
    step('before-settle');
    let settled = 0;
    for (let batch = 0; batch < SETTLE_BATCHES_PER_PASS_MAX; batch += 1) {
      const deposits = await repository.finalDeposits(db, chain, finalNumber, SETTLE_BATCH);
      // Credited only with the confirmation a credit requires; the rest are held or wait (deposit-confirmation.ts).
      const verdicts = await confirmFinalDeposits(access.node, deposits, options.logger);
      const ids = deposits.filter((deposit) => verdicts.get(deposit.id) === 'credit').map((deposit) => deposit.id);
      const unconfirmed = deposits
        .filter((deposit) => verdicts.get(deposit.id) === 'unconfirmed')
        .map((deposit) => deposit.id);
      if (unconfirmed.length > 0) {
        const held = await inTransaction(db, (tx) => holdUnconfirmedDeposits(tx, clock, unconfirmed));
        options.logger.warn(
          { chain, held, deposit_ids: unconfirmed },
          'final deposits without a second confirmation: held as unconfirmed for the operator',
        );
      }
      if (settleSingly) {
        settled += await settleOneByOne(ids);
      } else {
        try {
          settled += await settleBatch(ids);
        } catch (error) {
          settleSingly = true;
          throw error;
        }
      }
      // Deposits left waiting come back first: only a batch that moved every one of them may have more behind it.
      if (deposits.length < SETTLE_BATCH || ids.length + unconfirmed.length < deposits.length) break;
      if (!(await renewLease())) throw new LostLeadershipError();
    }
    settleSingly = false;
    if (prune)
      await inTransaction(db, (tx) =>
        repository.deleteScannedBlocks(tx, chain, { below: finalNumber - SCANNED_BLOCKS_KEPT_BELOW_FINAL }),
      );
    return settled;
  }

  return {
    leaderToken: token,
    async runPass() {
      const result = { leader: false, blocksScanned: 0, depositsSeen: 0, depositsSettled: 0, reorganisations: 0 };
      await ensureCursor();
      if (!(await renewLease())) return result;
      result.leader = true;
      movedBack = false;
      try {
        // Read once: the pass settles up to it (what becomes final meanwhile, the next pass settles).
        const solid = await access.node.getSolidifiedBlock();
        // Settling runs beside scanning: each time a batch is recorded, what is final by then is settled on
        // another connection while the next batch is fetched and recorded (both transactions take the ledger
        // accounts last, so they wait on each other only for their final statement and COMMIT).
        let scanning = true;
        // A batch recorded while a settlement runs is not lost: the next round starts at once.
        let recordedSinceSettle = false;
        let wake: (() => void) | undefined;
        const signal = () => {
          recordedSinceSettle = true;
          wake?.();
        };
        onRecorded = signal;
        const scanned = scan(result).finally(() => {
          scanning = false;
          signal();
        });
        let settled = 0;
        const settling = (async () => {
          while (scanning) {
            if (!recordedSinceSettle) await new Promise<void>((resolve) => (wake = resolve));
            wake = undefined;
            recordedSinceSettle = false;
            if (scanning) settled += await settle(solid);
          }
        })();
        // Handled from the start (it may fail while the scan is awaited); its error is thrown below.
        settling.catch(() => undefined);
        try {
          await scanned;
        } finally {
          onRecorded = undefined;
          await settling.catch(() => undefined);
        }
        await settling;
        result.depositsSettled = settled + (await settle(solid, true));
      } catch (error) {
        if (!(error instanceof LostLeadershipError)) throw error;
        options.logger.warn({ chain }, 'chain watcher lost its lease mid-pass; another watcher continues');
        result.leader = false;
      }
      return result;
    },
    release: () => repository.releaseLease(db, chain, token),
  };
}
