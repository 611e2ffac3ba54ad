// Before a final deposit is credited: who besides the node that read it says
// so (docs/crypto.md "What a credit requires").
//  - Two or more nodes configured: two different nodes' solidified result of
//    the transaction (/walletsolidity/gettransactioninfobyid) must each show it
//    succeeded in the deposit's block with the same Transfer at the same log
//    index (sender, recipient, amount). When the first two asked do not both
//    agree, every configured node is asked, and any two that agree suffice. A
//    node that does not have it final yet, or too few answering, leaves the
//    deposit confirming for the next pass; fewer than two agreeing while one
//    shows something else makes it `unconfirmed`.
//  - One node: a deposit its signed calldata states (`signed_call`) stands on
//    that check (tron/signed-calls.ts); one only the node's log states
//    (`log_only`, a transfer made inside another contract) has nothing
//    independent to stand on and is `unconfirmed`. The recipient's balance is
//    no such confirmation: the same node would answer it.
// No request runs inside a database transaction: verdicts first, then writes.
import type { Logger } from 'pino';
import { TronNodeUnavailableError, type TransactionOutcome, type TronNodeClient } from '../tron/node-client.ts';
import type { DepositRow } from './receiving-repository.ts';

/** `credit`: settle now; `unconfirmed`: hold for the operator; `wait`: ask again next pass. */
export type DepositVerdict = 'credit' | 'unconfirmed' | 'wait';

/** Nodes that must agree on a credit when that many are configured. */
const CONFIRMING_NODES = 2;
/** Transactions looked up at once. */
const CONFIRM_CONCURRENCY = 8;

export async function confirmFinalDeposits(
  node: TronNodeClient,
  deposits: readonly DepositRow[],
  logger: Logger,
): Promise<Map<string, DepositVerdict>> {
  const verdicts = new Map<string, DepositVerdict>();
  const byTransaction = new Map<string, DepositRow[]>();
  for (const deposit of deposits)
    byTransaction.set(deposit.tx_id, [...(byTransaction.get(deposit.tx_id) ?? []), deposit]);
  const txIds = [...byTransaction.keys()];
  for (let start = 0; start < txIds.length; start += CONFIRM_CONCURRENCY) {
    await Promise.all(
      txIds.slice(start, start + CONFIRM_CONCURRENCY).map(async (txId) => {
        const ofTransaction = byTransaction.get(txId)!;
        let outcomes = await solidifiedOutcomes(node, txId, CONFIRMING_NODES, logger);
        // A node that says otherwise (or has not got it yet) is outvoted only by two others that agree.
        if (Array.isArray(outcomes) && ofTransaction.some((deposit) => verdictOf(deposit, outcomes) !== 'credit')) {
          const everyNode = await solidifiedOutcomes(node, txId, 'all', logger);
          if (everyNode === 'unavailable' || (Array.isArray(everyNode) && everyNode.length > outcomes.length))
            outcomes = everyNode;
        }
        for (const deposit of ofTransaction) {
          const verdict = verdictOf(deposit, outcomes);
          if (verdict === 'unconfirmed') reportUnconfirmed(deposit, outcomes, logger);
          verdicts.set(deposit.id, verdict);
        }
      }),
    );
  }
  return verdicts;
}

/** Each confirming node's answer; null: fewer nodes configured; 'unavailable': not enough nodes answered. */
async function solidifiedOutcomes(
  node: TronNodeClient,
  txId: string,
  count: number | 'all',
  logger: Logger,
): Promise<(TransactionOutcome | null)[] | null | 'unavailable'> {
  try {
    return await node.getSolidifiedOutcomeOnNodes(txId, count);
  } catch (error) {
    if (!(error instanceof TronNodeUnavailableError)) throw error;
    logger.warn(
      { tx_id: txId, failures: error.failures },
      'a deposit waits: fewer than two TRON nodes answered for its transaction',
    );
    return 'unavailable';
  }
}

function verdictOf(
  deposit: DepositRow,
  outcomes: (TransactionOutcome | null)[] | null | 'unavailable',
): DepositVerdict {
  if (outcomes === 'unavailable') return 'wait';
  if (outcomes === null) return deposit.evidence === 'signed_call' ? 'credit' : 'unconfirmed';
  const agreeing = outcomes.filter((outcome) => outcome !== null && statesDeposit(outcome, deposit)).length;
  if (agreeing >= CONFIRMING_NODES) return 'credit';
  return outcomes.some((outcome) => outcome !== null && !statesDeposit(outcome, deposit)) ? 'unconfirmed' : 'wait';
}

function reportUnconfirmed(
  deposit: DepositRow,
  outcomes: (TransactionOutcome | null)[] | null | 'unavailable',
  logger: Logger,
): void {
  if (outcomes === null || outcomes === 'unavailable') {
    logger.warn(
      { deposit_id: deposit.id, tx_id: deposit.tx_id },
      'a deposit no signed calldata states, with one TRON node configured: held as unconfirmed for the operator',
    );
    return;
  }
  logger.error(
    {
      deposit_id: deposit.id,
      tx_id: deposit.tx_id,
      log_index: deposit.log_index,
      seen: outcomes.map((outcome) =>
        outcome === null
          ? null
          : {
              succeeded: outcome.succeeded,
              block: outcome.blockNumber,
              transfers: outcome.transfers.map((t) => `${t.logIndex}: ${t.amount} to ${t.to}`),
            },
      ),
    },
    'TRON nodes disagree about a deposit: held as unconfirmed for the operator, not credited',
  );
}

function statesDeposit(outcome: TransactionOutcome, deposit: DepositRow): boolean {
  if (!outcome.succeeded || BigInt(outcome.blockNumber) !== deposit.block_number) return false;
  const transfer = outcome.transfers.find((candidate) => candidate.logIndex === deposit.log_index);
  return (
    transfer !== undefined &&
    transfer.to === deposit.address &&
    transfer.from === deposit.from_address &&
    transfer.amount === deposit.amount_micro
  );
}
