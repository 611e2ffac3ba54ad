// Invoices still waiting for money past their expires_at: with nothing paid,
// expired; with part of it paid, underpaid. An invoice with a deposit still
// confirming waits for that deposit's finality (settlement decides then).
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db } from '../../db/transaction.ts';
import { emitInvoiceUpdated } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';

const EXPIRY_BATCH = 100;
const EXPIRY_BATCHES_PER_PASS_MAX = 50;

/** One pass; returns how many invoices it closed. */
export async function expireDueInvoices(db: Db, clock: Clock): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < EXPIRY_BATCHES_PER_PASS_MAX; batch += 1) {
    const handled = await inTransaction(db, async (tx) => {
      const due = await repository.claimExpiredOpenInvoices(tx, clock.now(), EXPIRY_BATCH);
      for (const invoice of due) {
        const updated = await repository.updateInvoice(tx, invoice.id, {
          status: invoice.paid_micro > 0n ? 'underpaid' : 'expired',
          updated_at: clock.now(),
        });
        await emitInvoiceUpdated(tx, clock, updated);
      }
      return due.length;
    });
    total += handled;
    if (handled < EXPIRY_BATCH) break;
  }
  return total;
}
