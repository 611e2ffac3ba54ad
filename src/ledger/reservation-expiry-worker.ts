// Voids reservations whose timeout has run out (TigerBeetle's pending timeout),
// so money held for an operation that never finished goes back to the account.
// The void's id is derived from the reservation, so workers racing on the same
// reservation, or a caller closing it at the same moment, close it once.
import type { AppContext, Worker } from '../context.ts';
import { inTransaction } from '../db/transaction.ts';
import { InvalidStateError } from '../errors.ts';
import { findExpiredReservations } from './ledger-repository.ts';
import { voidPending } from './ledger-service.ts';

export const RESERVATION_EXPIRY_POLL_INTERVAL_MS = 1_000;
const BATCH_SIZE = 100;
const BATCHES_PER_RUN_MAX = 50;

export interface ReservationExpiryWorker extends Worker {
  /** One pass: voids every expired reservation (in bounded batches); returns how many it voided. */
  runOnce(): Promise<number>;
}

/** The id of the void the worker writes for a reservation (`trf_…`). */
export function expiryVoidId(reservationTransferId: string): string {
  return `expiry:${reservationTransferId}`;
}

export function createReservationExpiryWorker(context: Pick<AppContext, 'db' | 'clock' | 'logger'>): ReservationExpiryWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  async function runOnce(): Promise<number> {
    let voided = 0;
    for (let batch = 0; batch < BATCHES_PER_RUN_MAX; batch++) {
      const due = await findExpiredReservations(context.db, context.clock.now(), BATCH_SIZE);
      for (const reservation of due) {
        try {
          const result = await inTransaction(context.db, (tx) =>
            voidPending(tx, context.clock, { id: expiryVoidId(reservation.id), pendingId: reservation.idempotency_key }),
          );
          if (!result.replayed) voided++;
        } catch (error) {
          // Posted or voided by its owner between the look-up and the void: nothing to do.
          if (!(error instanceof InvalidStateError)) throw error;
        }
      }
      if (due.length < BATCH_SIZE) break;
    }
    if (voided > 0) context.logger.info({ voided }, 'voided expired ledger reservations');
    return voided;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .catch((error: unknown) => context.logger.error({ err: error }, 'reservation expiry pass failed'))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, RESERVATION_EXPIRY_POLL_INTERVAL_MS);
  }

  return {
    name: 'ledger-reservation-expiry',
    runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
