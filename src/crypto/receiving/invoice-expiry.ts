// Invoices still waiting for money past their expires_at: with nothing paid,
// expired; with part of it paid, underpaid. An invoice with a deposit still
// confirming waits for that deposit's finality (settlement decides then).
import type { Clock } from '../../clock.ts';
import { inTransaction, type Db } from '../../db/transaction.ts';
import { emitInvoiceUpdated } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';
import { invoiceView, type InvoiceView } from './receiving-views.ts';
import { InvalidStateError, NotFoundError } from '../../errors.ts';

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

/**
 * The sandbox's expire helper (`POST /v1/test_helpers/crypto/invoices/{id}/expire`): the shop's
 * open invoice closes now as the expiry pass would close it at its expires_at, with its
 * crypto.invoice.updated in the same transaction. Not the shop's: 404; closed already, or a
 * deposit still confirming (its finality decides): 409 invalid_state. Sandbox only: the caller checks.
 */
export async function expireInvoiceNow(db: Db, clock: Clock, shopId: string, invoiceId: string): Promise<InvoiceView> {
  return inTransaction(db, async (tx) => {
    const expired = await repository.expireOpenInvoiceNow(tx, shopId, invoiceId, clock.now());
    if (expired) {
      await emitInvoiceUpdated(tx, clock, expired);
      return invoiceView(expired);
    }
    const invoice = await repository.findInvoiceOfShop(tx, shopId, invoiceId);
    if (!invoice) throw new NotFoundError('No such invoice.');
    if (invoice.status === 'pending' || invoice.status === 'confirming')
      throw new InvalidStateError(
        `Invoice ${invoice.id} has a deposit still confirming; mine blocks until it is final, and its finality decides the invoice.`,
      );
    throw new InvalidStateError(
      `Invoice ${invoice.id} is ${invoice.status}; only a pending or confirming invoice expires.`,
    );
  });
}
