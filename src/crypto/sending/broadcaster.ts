// Broadcasting signed transactions: the first broadcast after signing, and the
// re-broadcast of the SAME bytes for attempts whose result is unknown (or never
// came: a crash between signing and broadcasting). Accepted or duplicate →
// submitted, and the owner's onSubmitted runs in that transaction.
import { inTransaction } from '../../db/transaction.ts';
import type { BlockHeader, BroadcastResult } from '../tron/node-client.ts';
import { forEachLimited, NODE_CONCURRENCY, type ExecutorContext, type ExecutorPassResult } from './executor-context.ts';
import type { InFlightRow } from './expiry-watcher.ts';
import { toOutgoingTransfer } from './outgoing-transfers.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import { FINISH_CHUNK } from './transfer-finisher.ts';

export interface SignedTransfer {
  readonly transfer: OutgoingTransferRow;
  readonly txId: string;
  readonly hex: string;
}

interface Answer {
  readonly item: SignedTransfer;
  readonly answer: BroadcastResult;
}

/** Broadcasts again the attempts not yet expired whose broadcast result is unknown, unless the expiry step handled them. */
export async function rebroadcast(
  context: ExecutorContext,
  head: BlockHeader,
  inFlight: readonly InFlightRow[],
  skip: ReadonlySet<string>,
  result: ExecutorPassResult,
): Promise<void> {
  const due = inFlight.filter(
    (row) =>
      !skip.has(row.id) &&
      row.attempt_expiration.getTime() > head.timestamp &&
      (row.attempt_last_broadcast === null || row.attempt_last_broadcast === 'unknown'),
  );
  const hexes = await repository.signedHexOf(
    context.db,
    due.map((row) => row.tx_id!),
  );
  await broadcastAll(
    context,
    due.map((row) => ({ transfer: row, txId: row.tx_id!, hex: hexes.get(row.tx_id!)! })),
    result,
  );
  result.rebroadcast += due.length;
}

export async function broadcastAll(
  context: ExecutorContext,
  items: readonly SignedTransfer[],
  result: ExecutorPassResult,
): Promise<void> {
  await declareOwners(context, items);
  const answers: Answer[] = [];
  await forEachLimited(items, NODE_CONCURRENCY, async (item) => {
    answers.push({ item, answer: await context.node.broadcast({ txId: item.txId, hex: item.hex }) });
  });
  await context.step('after-broadcast');
  await recordAnswers(context, answers);
  result.broadcast += items.length;
  const submitted = answers.filter(
    ({ item, answer }) =>
      (answer.kind === 'accepted' || answer.kind === 'duplicate') && item.transfer.status === 'queued',
  );
  for (let start = 0; start < submitted.length; start += FINISH_CHUNK)
    await markSubmitted(context, submitted.slice(start, start + FINISH_CHUNK));
}

/** Sandbox: the chain learns each transfer's shop before seeing it, so a shop's armed outcomes hit only its own. */
async function declareOwners(context: ExecutorContext, items: readonly SignedTransfer[]): Promise<void> {
  if (!context.declareTransferOwners || items.length === 0) return;
  const owners: { txId: string; owner: string }[] = [];
  for (const [purpose, group] of Map.groupBy(items, (item) => item.transfer.purpose)) {
    const shopsOf = context.handlers[purpose]?.shopsOf;
    if (!shopsOf) continue;
    const shops = await shopsOf(
      context.db,
      group.map((item) => item.transfer.owner_id),
    );
    for (const item of group) {
      const shop = shops.get(item.transfer.owner_id);
      if (shop !== undefined) owners.push({ txId: item.txId, owner: shop });
    }
  }
  if (owners.length > 0) await context.declareTransferOwners(owners);
}

async function recordAnswers(context: ExecutorContext, answers: readonly Answer[]): Promise<void> {
  await repository.recordBroadcasts(
    context.db,
    answers.map(({ item, answer }) => ({
      txId: item.txId,
      answer: answer.kind === 'rejected' ? `rejected:${answer.code}` : answer.kind,
    })),
    context.clock.now(),
  );
  for (const { item, answer } of answers) {
    const fields = { chain: context.chain, transfer_id: item.transfer.id, tx_id: item.txId };
    if (answer.kind === 'rejected')
      context.logger.warn(
        { ...fields, code: answer.code, message: answer.message },
        'outgoing transaction refused by the node',
      );
    if (answer.kind === 'unknown')
      context.logger.warn(
        { ...fields, detail: answer.detail },
        'outgoing broadcast result unknown: the same bytes go again',
      );
  }
}

async function markSubmitted(context: ExecutorContext, chunk: readonly Answer[]): Promise<void> {
  await inTransaction(context.db, async (tx) => {
    const rows = await repository.markSubmittedMany(
      tx,
      chunk.map(({ item }) => ({ id: item.transfer.id, txId: item.txId })),
      context.clock.now(),
    );
    const firstTime = new Set(
      chunk.filter(({ item }) => item.transfer.submitted_at === null).map(({ item }) => item.transfer.id),
    );
    // The owner hears once, at the first submission (a re-signed transfer was submitted before).
    for (const row of rows)
      if (firstTime.has(row.id))
        await context.handlers[row.purpose]?.onSubmitted?.(tx, context.clock, toOutgoingTransfer(row));
  });
}
