// Voids reservations whose timeout has run out (TigerBeetle's pending timeout),
// so money held for an operation that never finished goes back to the account.
// The void's id is derived from the reservation, so workers racing on the same
// reservation, or a caller closing it at the same moment, close it once.
import type { AppContext } from '../context.ts';
import { WORK_TOPICS } from '../db/notifications.ts';
import { createBatchedWorker, type Batch, type PollingWorker, type PollingWorkerOptions } from '../polling-worker.ts';
import { inTransaction } from '../db/transaction.ts';
import { InvalidStateError } from '../errors.ts';
import { findExpiredReservations, nextOpenReservationExpiryAfter } from './ledger-repository.ts';
import { voidPending } from './ledger-service.ts';

/** A pass a second without wake-ups; at most 50 batches of 100 reservations a pass. */
const PACE = { intervalMs: 1_000, batchSize: 100, batchesPerPassMax: 50 };

/** Its runOnce makes one pass: voids every expired reservation (in bounded batches); returns how many it voided. */
export type ReservationExpiryWorker = PollingWorker;

/** The id of the void the worker writes for a reservation (`trf_…`). */
export function expiryVoidId(reservationTransferId: string): string {
  return `expiry:${reservationTransferId}`;
}

export function createReservationExpiryWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'logger' | 'health' | 'notifications'>,
  options: PollingWorkerOptions = {},
): ReservationExpiryWorker {
  return createBatchedWorker(
    context,
    {
      name: 'ledger-reservation-expiry',
      ...PACE,
      /** Voids a batch of expired reservations; counts those this worker voided. */
      async runBatch(batchSize): Promise<Batch> {
        const due = await findExpiredReservations(context.db, context.clock.now(), batchSize);
        let voided = 0;
        for (const reservation of due) {
          try {
            const result = await inTransaction(context.db, (tx) =>
              voidPending(tx, context.clock, {
                id: expiryVoidId(reservation.id),
                pendingId: reservation.idempotency_key,
              }),
            );
            if (!result.replayed) voided++;
          } catch (error) {
            // Posted or voided by its owner between the look-up and the void: nothing to do.
            if (!(error instanceof InvalidStateError)) throw error;
          }
        }
        return { taken: due.length, handled: voided };
      },
      afterPass(voided) {
        if (voided > 0) context.logger.info({ voided }, 'voided expired ledger reservations');
      },
      // A reservation whose timeout is under a minute is notified at creation (migration 0014).
      wakeUps: {
        topic: WORK_TOPICS.reservationExpiry,
        nextDueAt: (passStartedAt) => nextOpenReservationExpiryAfter(context.db, passStartedAt),
      },
    },
    options,
  );
}
