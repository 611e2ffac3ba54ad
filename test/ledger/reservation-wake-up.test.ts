// The reservation expiry worker sleeps while nothing is due (an hour here), yet a
// reservation with a one-second timeout is voided once it runs out: its creation
// notifies (migration 0014), the woken worker finds it not yet due and sleeps
// exactly until it is. The clock is driven; the hour-long sleep ending at all is
// the wake-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.ts';
import type { Notifications } from '../../src/db/notifications.ts';
import { inTransaction } from '../../src/db/transaction.ts';
import { findTransfer, reserve } from '../../src/ledger/ledger-service.ts';
import {
  createReservationExpiryWorker,
  type ReservationExpiryWorker,
} from '../../src/ledger/reservation-expiry-worker.ts';
import { backends } from '../support/databases.ts';
import { watchSleeps, type SleepWatch } from '../support/worker-sleeps.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

/** A sleep the test never waits out: only a wake-up ends it. */
const BACKSTOP_MS = 3_600_000;
const TIMEOUT_SECONDS = 1;

describe.each(backends)('an idle reservation expiry worker on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  let notifications: Notifications;
  let context: AppContext;
  let sleeps: SleepWatch;
  let worker: ReservationExpiryWorker;

  beforeAll(async () => {
    notifications = await environment().database.listen();
    context = { ...environment().context, notifications };
    sleeps = watchSleeps();
    worker = createReservationExpiryWorker(context, { backstopMs: BACKSTOP_MS, sleepObserver: sleeps.observer });
    worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await notifications.close();
  });

  it('a reservation with a one-second timeout is voided once it runs out, though the worker sleeps an hour', async () => {
    const accounts = await merchantAccounts(context, await newMerchantId(context));
    await fund(context, accounts.settlement.id, accounts.main.id, 5_000n);
    expect(await sleeps.asleep()).toBe(BACKSTOP_MS);
    for (let round = 0; round < 2; round++) {
      const asleepSince = sleeps.sleeps;
      const id = uniqueName(`wake:${backend}:${round}`);
      await inTransaction(context.db, (tx) =>
        reserve(tx, context.clock, {
          id,
          debitAccountId: accounts.main.id,
          creditAccountId: accounts.payout.id,
          amount: 1_000n,
          type: 'payout',
          reference: { type: 'test', id },
          timeoutSeconds: TIMEOUT_SECONDS,
        }),
      );
      // Woken by the creation, it finds nothing due yet and sleeps until the timeout runs out.
      await sleeps.sleepsEnded(asleepSince);
      expect(await sleeps.asleep((pauseMs) => pauseMs > 0)).toBe(TIMEOUT_SECONDS * 1_000);
      environment().clock.advance(TIMEOUT_SECONDS * 1_000);
      // That sleep ends on its own; the pass voids the reservation, and then nothing is due.
      await sleeps.asleep((pauseMs) => pauseMs === BACKSTOP_MS);
      expect((await findTransfer(context.db, id))?.currentStatus).toBe('voided');
    }
  });
});
