// Voids reservations whose timeout has run out (TigerBeetle's pending timeout),
// so money held for an operation that never finished goes back to the account.
// The void's id is derived from the reservation, so workers racing on the same
// reservation, or a caller closing it at the same moment, close it once.
import type { AppContext } from '../context.ts';
import { WORK_TOPICS } from '../db/notifications.ts';
import { createPollingWorker, type PollingWorker } from '../polling-worker.ts';
import { inTransaction } from '../db/transaction.ts';
import { InvalidStateError } from '../errors.ts';
import { findExpiredReservations, nextOpenReservationExpiryAfter } from './ledger-repository.ts';
import { voidPending } from './ledger-service.ts';

const RESERVATION_EXPIRY_POLL_INTERVAL_MS = 1_000;
const BATCH_SIZE = 100;
const BATCHES_PER_RUN_MAX = 50;

/** Its runOnce makes one pass: voids every expired reservation (in bounded batches); returns how many it voided. */
export type ReservationExpiryWorker = PollingWorker;

/** The id of the void the worker writes for a reservation (`trf_…`). */
export function expiryVoidId(reservationTransferId: string): string {
  return `expiry:${reservationTransferId}`;
}

export function createReservationExpiryWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'logger' | 'health' | 'notifications'>,
): ReservationExpiryWorker {
  /** The last pass stopped at its batch limit with reservations still due. */
  let cutShort = false;
  async function runOnce(): Promise<number> {
    let voided = 0;
    cutShort = true;
    for (let batch = 0; batch < BATCHES_PER_RUN_MAX; batch++) {
      const due = await findExpiredReservations(context.db, context.clock.now(), BATCH_SIZE);
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
      if (due.length < BATCH_SIZE) {
        cutShort = false;
        break;
      }
    }
    if (voided > 0) context.logger.info({ voided }, 'voided expired ledger reservations');
    return voided;
  }

  return createPollingWorker({
    name: 'ledger-reservation-expiry',
    intervalMs: RESERVATION_EXPIRY_POLL_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    runOnce,
    // A reservation whose timeout is under a minute is notified at creation (migration 0014).
    wakeUps: context.notifications && {
      notifications: context.notifications,
      topic: WORK_TOPICS.reservationExpiry,
      clock: context.clock,
      nextDueAt: async (passStartedAt) =>
        cutShort ? context.clock.now() : nextOpenReservationExpiryAfter(context.db, passStartedAt),
    },
  });
}
