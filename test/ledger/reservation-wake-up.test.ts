// Issue 12, point 4: the reservation expiry worker sleeps while nothing is due
// (a backstop of a minute here), yet a reservation with a one-second timeout is
// voided within a second of running out: its creation notifies (migration 0014)
// and the worker then sleeps exactly until it falls due.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import type { AppContext } from '../../src/context.ts';
import type { Notifications } from '../../src/db/notifications.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { findTransfer, reserve } from '../../src/ledger/ledger-service.ts';
import {
  createReservationExpiryWorker,
  type ReservationExpiryWorker,
} from '../../src/ledger/reservation-expiry-worker.ts';
import { backends } from '../support/databases.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

const VOID_LATENCY_MS_MAX = 1_000;

describe.each(backends)('an idle reservation expiry worker on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  let notifications: Notifications;
  let context: AppContext;
  let worker: ReservationExpiryWorker;

  beforeAll(async () => {
    notifications = await environment().database.listen();
    // Real time: the worker sleeps until a due time read from this clock.
    context = { ...environment().context, clock: systemClock, notifications };
    worker = createReservationExpiryWorker(context);
    worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await notifications.close();
  });

  it('a reservation with a one-second timeout is voided within a second of running out, though the worker sleeps a minute', async () => {
    const accounts = await merchantAccounts(context, await newMerchantId(context));
    await fund(context, accounts.settlement.id, accounts.main.id, 5_000n);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let round = 0; round < 2; round++) {
      const id = uniqueName(`wake:${backend}:${round}`);
      const reservation = await inTransaction(context.db, (tx) =>
        reserve(tx, context.clock, {
          id,
          debitAccountId: accounts.main.id,
          creditAccountId: accounts.payout.id,
          amount: 1_000n,
          type: 'payout',
          reference: { type: 'test', id },
          timeoutSeconds: 1,
        }),
      );
      const expiresAtMs = reservation.expiresAt!.getTime();
      while ((await findTransfer(context.db, id))?.currentStatus !== 'voided') {
        if (Date.now() - expiresAtMs > VOID_LATENCY_MS_MAX)
          throw new Error(`reservation ${id} not voided within ${VOID_LATENCY_MS_MAX} ms of its timeout`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(Date.now() - expiresAtMs).toBeLessThan(VOID_LATENCY_MS_MAX);
    }
  });
});
