// The shape every periodic background job shares (payment expiry, charge
// reconciliation, ledger reservation expiry): run one pass, wait, run again; a
// failed pass is logged and the next one comes all the same; `stop` waits for
// the pass in flight.
//
// How long it waits: without wake-ups, `intervalMs`. With wake-ups (database
// notifications, db/notifications.ts) it sleeps until the earliest due time it
// knows of (`nextDueAt`) or the backstop, whichever is sooner, and a
// notification on its topic wakes it at once; so an idle gateway sleeps, and
// due work starts within moments. The backstop pass finds whatever a missed
// notification would have announced. While the listening connection is down,
// notifications are being missed, so it polls every `intervalMs` (at most
// LISTENER_DOWN_POLL_MS) until the connection is back.
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Worker } from './context.ts';
import { WORK_CHANNEL, type Notifications } from './db/notifications.ts';
import { reportFailure, type DependencyHealth } from './health/dependency-health.ts';

/**
 * Longest sleep with wake-ups on. Migration 0014's triggers notify only for work due sooner
 * than 60 s after it is created; this must stay below that.
 */
export const BACKSTOP_MS = 30_000;
/** Longest pause while notifications can be missed: due work still starts within a second. */
export const LISTENER_DOWN_POLL_MS = 1_000;

export interface PollingWorker extends Worker {
  /** One pass; returns how many items it handled. */
  runOnce(): Promise<number>;
}

export interface WakeUps {
  readonly notifications: Notifications;
  /** The payload on WORK_CHANNEL that wakes this worker (db/notifications.ts WORK_TOPICS). */
  readonly topic: string;
  readonly clock: Clock;
  /**
   * After a pass: when the next item due after `passStartedAt` falls due (at or before now:
   * at once), or undefined when nothing is scheduled. Counting from when the pass began,
   * not from now, keeps an item that fell due while the pass ran (a timer that fired a
   * moment early) from slipping between the pass and this look-up to the backstop. Items
   * the pass could not take (held by another worker) should not count, or the worker
   * would spin on them.
   */
  readonly nextDueAt?: (passStartedAt: Date) => Promise<Date | undefined>;
  /** Longest sleep; BACKSTOP_MS by default. */
  readonly backstopMs?: number;
}

export function createPollingWorker(options: {
  readonly name: string;
  /** The pause between passes without wake-ups. */
  readonly intervalMs: number;
  readonly logger: Logger;
  /** Where a pass reports the dependencies it reached or failed to reach. */
  readonly health: DependencyHealth;
  readonly runOnce: () => Promise<number>;
  /** Sleep until due or notified instead of polling every `intervalMs`. */
  readonly wakeUps?: WakeUps | undefined;
}): PollingWorker {
  const wakeUps = options.wakeUps;
  const backstopMs = wakeUps?.backstopMs ?? BACKSTOP_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  /** A wake-up came while a pass was running: what it announced may have been missed by the pass. */
  let wokenDuringPass = false;
  let unsubscribe: (() => void)[] = [];

  /** Pause after a successful pass. */
  async function pauseAfterPass(passStartedAt: Date): Promise<number> {
    if (!wakeUps) return options.intervalMs;
    if (!wakeUps.notifications.listening) return Math.min(options.intervalMs, LISTENER_DOWN_POLL_MS);
    const due = await wakeUps.nextDueAt?.(passStartedAt);
    if (due === undefined) return backstopMs;
    return Math.min(backstopMs, Math.max(0, due.getTime() - wakeUps.clock.now().getTime()));
  }

  async function cycle(): Promise<number> {
    wokenDuringPass = false;
    const passStartedAt = wakeUps ? wakeUps.clock.now() : new Date();
    const askedAt = Date.now();
    try {
      const handled = await options.runOnce();
      // A whole pass reached the database (and stored something when it handled items).
      options.health.up('database', askedAt, handled > 0);
      const pauseMs = await pauseAfterPass(passStartedAt);
      return wokenDuringPass ? 0 : pauseMs;
    } catch (error) {
      reportFailure(options, error, { worker: options.name }, `${options.name} pass failed`);
      return wakeUps ? Math.min(options.intervalMs, LISTENER_DOWN_POLL_MS) : options.intervalMs;
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = cycle().then((pauseMs) => {
        running = undefined;
        schedule(pauseMs);
      });
    }, delayMs);
  }

  /** Runs a pass now, or right after the one in flight. */
  function wake(): void {
    if (stopped) return;
    if (running) {
      wokenDuringPass = true;
      return;
    }
    clearTimeout(timer);
    schedule(0);
  }

  return {
    name: options.name,
    runOnce: options.runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      if (wakeUps) {
        unsubscribe = [
          wakeUps.notifications.subscribe(WORK_CHANNEL, (payload) => {
            if (payload === wakeUps.topic) wake();
          }),
          // Lost: poll from now on; back: whatever was notified meanwhile was missed.
          wakeUps.notifications.onListeningChange(wake),
        ];
      }
      schedule(wakeUps ? 0 : options.intervalMs);
    },
    async stop() {
      stopped = true;
      for (const stop of unsubscribe) stop();
      unsubscribe = [];
      clearTimeout(timer);
      await running;
    },
  };
}
