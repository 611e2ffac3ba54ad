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
//
// `createBatchedWorker` is the pass most of them make: the due items of a queue,
// in bounded batches; a pass cut short by its limit comes again at once.
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { AppContext, Worker } from './context.ts';
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
  readonly backstopMs?: number | undefined;
}

/**
 * A seam for tests: told when a worker goes to sleep and when it wakes, so that a test can wait
 * until a worker is provably asleep, and tell what woke it, instead of guessing with a timer.
 */
export interface SleepObserver {
  /** The worker sleeps now, for `pauseMs` unless woken. */
  asleep(pauseMs: number): void;
  /** The sleep is over: its pause ran out ('timer'), or a notification or a stop cut it short ('woken'). */
  awake(cause: 'timer' | 'woken'): void;
}

/** What a worker's factory takes beside its context. */
export interface PollingWorkerOptions {
  /** With wake-ups: the longest sleep (BACKSTOP_MS by default). */
  readonly backstopMs?: number | undefined;
  readonly sleepObserver?: SleepObserver | undefined;
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
  readonly sleepObserver?: SleepObserver | undefined;
}): PollingWorker {
  const wakeUps = options.wakeUps;
  const backstopMs = wakeUps?.backstopMs ?? BACKSTOP_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;
  /** Waiting out the pause after a pass. */
  let sleeping = false;
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

  /** Runs a pass after `delayMs`; after a pass, that pause is a sleep the observer is told of. */
  function schedule(delayMs: number, afterPass = false): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      endSleep('timer');
      running = cycle().then((pauseMs) => {
        running = undefined;
        schedule(pauseMs, true);
      });
    }, delayMs);
    if (afterPass) {
      sleeping = true;
      options.sleepObserver?.asleep(delayMs);
    }
  }

  function endSleep(cause: 'timer' | 'woken'): void {
    if (!sleeping) return;
    sleeping = false;
    options.sleepObserver?.awake(cause);
  }

  /** Runs a pass now, or right after the one in flight. */
  function wake(): void {
    if (stopped) return;
    if (running) {
      wokenDuringPass = true;
      return;
    }
    endSleep('woken');
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
      endSleep('woken');
      for (const stop of unsubscribe) stop();
      unsubscribe = [];
      clearTimeout(timer);
      await running;
    },
  };
}

/** One batch of a pass. */
export interface Batch {
  /** Items the batch took up: fewer than the batch size means none are left due. */
  readonly taken: number;
  /** Those the pass counts as handled (expired, voided, resolved…). */
  readonly handled: number;
}

/** A worker whose pass works through a queue of due items in bounded batches. */
export interface BatchedWorkerSpec {
  readonly name: string;
  /** The pause between passes without wake-ups. */
  readonly intervalMs: number;
  readonly batchSize: number;
  /** A pass stops after this many full batches, leaving the rest to the next pass. */
  readonly batchesPerPassMax: number;
  readonly runBatch: (batchSize: number) => Promise<Batch>;
  /** Told what each pass handled. */
  readonly afterPass?: (handled: number) => void;
  /**
   * With database notifications, sleep until the next item falls due (see WakeUps.nextDueAt);
   * a pass cut short by the batch limit runs again at once.
   */
  readonly wakeUps?: Required<Pick<WakeUps, 'topic' | 'nextDueAt'>>;
}

/** A polling worker whose pass is a bounded series of batches; returns how many items the pass handled. */
export function createBatchedWorker(
  context: Pick<AppContext, 'clock' | 'logger' | 'health' | 'notifications'>,
  spec: BatchedWorkerSpec,
  options: PollingWorkerOptions = {},
): PollingWorker {
  /** The last pass stopped at its batch limit with items still due. */
  let cutShort = false;
  async function runOnce(): Promise<number> {
    let handled = 0;
    cutShort = true;
    for (let batch = 0; batch < spec.batchesPerPassMax; batch++) {
      const result = await spec.runBatch(spec.batchSize);
      handled += result.handled;
      if (result.taken < spec.batchSize) {
        cutShort = false;
        break;
      }
    }
    spec.afterPass?.(handled);
    return handled;
  }
  const wakeUps = spec.wakeUps;
  return createPollingWorker({
    name: spec.name,
    intervalMs: spec.intervalMs,
    logger: context.logger,
    health: context.health,
    runOnce,
    wakeUps: wakeUps &&
      context.notifications && {
        notifications: context.notifications,
        topic: wakeUps.topic,
        clock: context.clock,
        backstopMs: options.backstopMs,
        nextDueAt: async (passStartedAt) => (cutShort ? context.clock.now() : wakeUps.nextDueAt(passStartedAt)),
      },
    sleepObserver: options.sleepObserver,
  });
}
