// The chain's actual cost of finished transfers, booked in the ledger in the
// transaction that finishes them: debit network_fees, credit network_costs, in
// micro-USDT at the configured rate (each transfer's fee rounded up).
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ensureAccounts, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { transfer as ledgerTransfer, type LedgerBook } from '../../ledger/ledger-service.ts';
import { chainCostMicro } from './planner.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';

export async function bookChainCosts(
  tx: Tx,
  clock: Clock,
  book: LedgerBook,
  trxUsdtRateMicro: bigint,
  finals: readonly OutgoingTransferRow[],
): Promise<void> {
  const micro = chainCostMicro(
    finals.map((final) => final.fee_sun ?? 0n),
    trxUsdtRateMicro,
  );
  if (micro <= 0n) return;
  const first = finals.map((final) => final.id).sort()[0]!;
  const shard = shardOf(first);
  const [costs, fees] = await ensureAccounts(tx, clock, [
    systemAccountKey(book, 'network_costs', 'USDT', shard),
    systemAccountKey(book, 'network_fees', 'USDT', shard),
  ]);
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
