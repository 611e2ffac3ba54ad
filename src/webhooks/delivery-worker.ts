// The delivery engine. A worker claims due deliveries in batches (FOR UPDATE
// SKIP LOCKED, under a lease), runs at most `concurrency` attempts at a time,
// and records each attempt together with the delivery's next state in one
// statement. Any number of workers, in any number of processes, can run side by
// side; one killed mid-attempt loses nothing: its lease expires and the attempt
// is made again (delivery is at least once; receivers deduplicate by webhook-id).
// Receivers take turns for the worker's slots, each within its own cap
// (origin-gate.ts), so a slow receiver delays only its own webhooks.
// With database notifications (db/notifications.ts) an idle worker sleeps until
// the next retry or lease falls due, or the backstop; a new delivery wakes it at
// once (migration 0014's trigger). Without them it polls every `idlePollMs`.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { AppContext, Worker } from '../context.ts';
import { WORK_CHANNEL, WORK_TOPICS } from '../db/notifications.ts';
import { reportFailure } from '../health/dependency-health.ts';
import { BACKSTOP_MS, LISTENER_DOWN_POLL_MS, type PollingWorkerOptions } from '../polling-worker.ts';
import { createWebhookSecretOpener } from './webhook-secrets.ts';
import { attemptDelivery, createRecordBatcher, type AttemptDeps } from './delivery-attempt.ts';
import { createOriginGate } from './origin-gate.ts';
import {
  claimDueDeliveries,
  claimPacedDeliveries,
  nextDeliveryDueAt,
  postponeDeliveries,
  releaseDeliveries,
  type ClaimedDelivery,
  type PacedPostponement,
} from './webhook-repository.ts';
import { createWebhookSender, DEFAULT_ATTEMPT_TIMEOUT_MS, type SendResult } from './webhook-sender.ts';
import { webhookMetrics } from './webhook-metrics.ts';

export const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_IDLE_POLL_MS = 500;
/** The longest a finished attempt waits for others to be written with it. */
const RECORD_BATCH_DELAY_MS = 10;
/** Time a lease must still have left, beyond the attempt's own limit, for an attempt to start. */
const LEASE_MARGIN_MS = 5_000;
/** Weight of the newest send in the moving average of send durations. */
const SEND_AVERAGE_WEIGHT = 0.1;
/** Paced postponements remembered at most (all receivers); beyond it the oldest are forgotten and simply fall due. */
const MAX_PACED_REMEMBERED = 10_000;
/** `drain` stops after this many rounds even if work keeps appearing. */
const MAX_DRAIN_ROUNDS = 100_000;

/** How a delivery worker runs, beside the backstop and the sleep observer every polling worker takes. */
export interface DeliveryWorkerOptions extends PollingWorkerOptions {
  /** Attempts in flight at most; `config.webhookConcurrency` by default. */
  readonly concurrency?: number;
  /** Attempts in flight at most per receiver origin; `config.webhookOriginConcurrency` by default. */
  readonly originConcurrency?: number;
  /** How long a claim holds a delivery; must exceed the attempt timeout by LEASE_MARGIN_MS. */
  readonly leaseMs?: number;
  readonly attemptTimeoutMs?: number;
  /** Pause between polls when nothing was due, without wake-ups (or while they are down). */
  readonly idlePollMs?: number;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
}

interface QueuedDelivery {
  readonly delivery: ClaimedDelivery;
  /** Epoch ms. */
  readonly leaseEndsAt: number;
  readonly origin: string;
}

export interface DeliveryWorker extends Worker {
  /** Claims what is due now (up to the free capacity) and starts those attempts; resolves to how many were claimed. */
  runOnce(): Promise<number>;
  /** Delivers everything due at the clock's current time, waiting for every attempt; resolves to the attempts made. */
  drain(): Promise<number>;
  /** Attempts currently in flight. */
  readonly inFlight: number;
}

export function createDeliveryWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'health' | 'metrics' | 'keyring' | 'notifications'>,
  options: DeliveryWorkerOptions = {},
): DeliveryWorker {
  const concurrency = options.concurrency ?? context.config.webhookConcurrency;
  // Claimed deliveries held at most: those in flight plus a queue of the next ones, so that
  // the next claim runs while attempts are still in flight and no slot waits for the database.
  // Claims and records come in batches of a few times the concurrency: each statement has a
  // fixed cost about that of 20 rows (docs/webhooks.md, Performance).
  const maxHeld = 8 * concurrency;
  const claimThreshold = 3 * concurrency;
  const recordBatch = 4 * concurrency;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const attemptTimeoutMs = options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  if (leaseMs < attemptTimeoutMs + LEASE_MARGIN_MS) {
    throw new Error(
      `a webhook lease (${leaseMs} ms) must exceed the attempt timeout (${attemptTimeoutMs} ms) by ${LEASE_MARGIN_MS} ms`,
    );
  }
  const idlePollMs = options.idlePollMs ?? DEFAULT_IDLE_POLL_MS;
  const backstopMs = options.backstopMs ?? BACKSTOP_MS;
  const notifications = context.notifications;
  const originLimit = Math.min(concurrency, options.originConcurrency ?? context.config.webhookOriginConcurrency);
  const sender = createWebhookSender({
    config: context.config,
    timeoutMs: attemptTimeoutMs,
    connectionsPerOrigin: originLimit,
  });
  // An attempt that takes half its time limit or more marks its receiver as impaired.
  const gate = createOriginGate({ limit: originLimit, slowMs: attemptTimeoutMs / 2 });
  const batcher = createRecordBatcher(context.db, recordBatch, RECORD_BATCH_DELAY_MS);
  const deps: AttemptDeps = {
    db: context.db,
    clock: context.clock,
    logger: context.logger,
    keyring: context.keyring,
    openSecret: createWebhookSecretOpener(context.keyring),
    sender,
    metrics: webhookMetrics(context),
    random: options.random,
    record: (record) => {
      if (record.nextAttemptAt) noteDue(record.nextAttemptAt);
      return batcher.add(record);
    },
  };
  // How long a queued delivery may wait to start, with room to spare: half of what its lease
  // leaves after the attempt's own limit and the margin. Fewer are held when attempts are slow,
  // so that a queue behind slow receivers starts within its leases instead of being skipped.
  const safeWaitMs = (leaseMs - attemptTimeoutMs - LEASE_MARGIN_MS) / 2;
  /** Queued deliveries per slot at most: for one receiver, as many as the worker holds for all. */
  const queuedPerSlotMax = maxHeld / concurrency - 1;
  const random = options.random ?? Math.random;
  /** Moving average of how long a send takes; it starts at the worst case, the time limit. */
  let averageSendMs = attemptTimeoutMs;
  function holdLimit(): number {
    const startableInTime = Math.floor((concurrency * safeWaitMs) / Math.max(averageSendMs, 1));
    return Math.min(maxHeld, concurrency + startableInTime);
  }
  /**
   * Claimed, not yet started, per receiver origin, oldest claim first; each with the end of its
   * lease. Origins take turns: one that has just started an attempt goes to the back.
   */
  const queues = new Map<string, QueuedDelivery[]>();
  let queued = 0;
  /**
   * What this worker put off at a receiver's pace, per origin, earliest booked first. The pace is
   * a moving average of recent sends, so a slow spell books the backlog behind it slowly; when the
   * receiver has room again before those times and nothing else is due, they are claimed early.
   */
  const paced = new Map<string, PacedPostponement[]>();
  let pacedCount = 0;
  /** Requests on the wire: at most `concurrency`. */
  let sending = 0;
  /** Those waiting for a request to come back (the loop, `drain`). */
  let slotWaiters: (() => void)[] = [];
  const slotFreed = () => new Promise<void>((resolve) => slotWaiters.push(resolve));
  /** Writes under way: attempts not yet recorded (each still holds its lease) and postponements. */
  const unrecorded = new Set<Promise<void>>();
  let loop: Promise<void> | undefined;
  let stopped = false;
  let stopping: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  /** Shortens the pause in progress to end by a time (epoch ms of the real clock). */
  let pauseUntil: ((endsAtMs: number) => void) | undefined;
  /** A wake-up came since the last claim began: what it announced may not have been claimed. */
  let notified = false;
  let unsubscribe: (() => void)[] = [];
  /** While paused: claim early once the queue is down to this many (postponed deliveries fall due at the pace it drains). */
  let wakeWhenQueuedAtMost: number | undefined;

  function enqueue(item: QueuedDelivery): void {
    const items = queues.get(item.origin);
    if (items) items.push(item);
    else queues.set(item.origin, [item]);
    queued += 1;
  }

  /** Takes every queued delivery of one origin out of the queue. */
  function dequeueOrigin(origin: string): QueuedDelivery[] {
    const items = queues.get(origin) ?? [];
    queues.delete(origin);
    queued -= items.length;
    return items;
  }

  /** Gives deliveries back to the database, due later, so that they hold neither a slot nor a place in the queue. */
  function postpone(origin: string, items: readonly QueuedDelivery[]): void {
    if (items.length === 0) return;
    const now = context.clock.now();
    const times = gate.postponeTimes(origin, items.length, now.getTime(), random);
    const impaired = gate.isImpaired(origin);
    deps.metrics.countPostponed(impaired ? 'impaired' : 'backlog', items.length);
    if (impaired) {
      context.logger.warn(
        { origin, deliveries: items.length },
        'webhook receiver is impaired (its last attempt stalled); its deliveries are postponed',
      );
    }
    const postponements = items.map(({ delivery }, index) => ({
      id: delivery.deliveryId,
      leaseToken: delivery.leaseToken,
      until: new Date(times[index]!),
    }));
    const write: Promise<void> = postponeDeliveries(context.db, postponements, now)
      .then(() => {
        // Only now are they out of their lease: a pause that began while the write was under way read
        // them as leased (due when the lease ends, or the backstop) and must hear of them.
        noteDue(new Date(Math.min(...times)));
        if (impaired) return;
        rememberPaced(origin, postponements);
        wake?.();
      })
      .catch((error: unknown) =>
        context.logger.warn({ err: error, origin }, 'could not postpone webhook deliveries; their leases will expire'),
      )
      .finally(() => unrecorded.delete(write));
    unrecorded.add(write);
  }

  function rememberPaced(origin: string, postponements: readonly { id: string; until: Date }[]): void {
    const list = paced.get(origin) ?? [];
    for (const item of postponements) list.push({ id: item.id, untilMs: item.until.getTime() });
    list.sort((a, b) => a.untilMs - b.untilMs);
    paced.set(origin, list);
    pacedCount += postponements.length;
    while (pacedCount > MAX_PACED_REMEMBERED) forgetPaced(paced.keys().next().value!, 1);
  }

  function forgetPaced(origin: string, count: number): PacedPostponement[] {
    const list = paced.get(origin) ?? [];
    const taken = list.splice(0, count);
    pacedCount -= taken.length;
    if (list.length === 0) paced.delete(origin);
    return taken;
  }

  /** How many of an origin's deliveries this worker may hold (sending or queued): what it can start within the leases at the receiver's pace. */
  function holdCapacity(origin: string): number {
    return gate.capacity(origin, safeWaitMs, queuedPerSlotMax);
  }

  /** How many of an origin's deliveries this worker holds now (sending or queued). */
  function heldFor(origin: string): number {
    return gate.inFlight(origin) + (queues.get(origin)?.length ?? 0);
  }

  /** How many more of an origin's deliveries this worker may hold now. */
  function pacedRoom(origin: string): number {
    return holdCapacity(origin) - heldFor(origin);
  }

  /** Room for half the receiver's hold at least: enough for an early claim to take a batch in one statement. */
  function hasPacedRoom(origin: string): boolean {
    return pacedRoom(origin) >= holdCapacity(origin) / 2;
  }

  /** A lease from now: what a claim writes, and when its deliveries must have started by (epoch ms). */
  function newLease(): { lease: { now: Date; lockedUntil: Date; leaseToken: string }; leaseEndsAt: number } {
    const now = context.clock.now();
    const leaseEndsAt = now.getTime() + leaseMs;
    return { lease: { now, lockedUntil: new Date(leaseEndsAt), leaseToken: randomUUID() }, leaseEndsAt };
  }

  /**
   * Claims early what was put off at a pace slower than the receiver turned out to take: for each
   * healthy receiver with room for half its hold or more, its earliest-booked postponements still ahead.
   * Called only when a claim found nothing more due, so other receivers' due rows come first.
   */
  async function claimPacedEarly(): Promise<number> {
    if (pacedCount === 0 || stopped) return 0;
    const nowMs = context.clock.now().getTime();
    const taken: PacedPostponement[] = [];
    let room = claimRoom();
    for (const origin of [...paced.keys()]) {
      if (room <= 0) break;
      if (gate.isImpaired(origin)) {
        forgetPaced(origin, Infinity);
        continue;
      }
      // Those already due are claimed the ordinary way.
      const list = paced.get(origin)!;
      const ahead = list.findIndex((item) => item.untilMs > nowMs);
      forgetPaced(origin, ahead === -1 ? list.length : ahead);
      if (!hasPacedRoom(origin)) continue;
      const batch = forgetPaced(origin, Math.min(room, pacedRoom(origin)));
      taken.push(...batch);
      room -= batch.length;
    }
    if (taken.length === 0) return 0;
    const { lease, leaseEndsAt } = newLease();
    const claimed = await claimPacedDeliveries(context.db, { ...lease, postponements: taken });
    for (const delivery of claimed) enqueue({ delivery, leaseEndsAt, origin: sender.originOf(delivery.url) });
    deps.metrics.countClaimedEarly(claimed.length);
    startQueued();
    return claimed.length;
  }

  /** Whether `claimPacedEarly` would claim now: a healthy receiver with deliveries put off at its pace has room for a batch. */
  function canClaimPacedEarly(): boolean {
    if (claimRoom() <= 0) return false;
    const nowMs = context.clock.now().getTime();
    for (const [origin, list] of paced) {
      // Booked times already past are claimed the ordinary way; only those still ahead call for an early claim.
      if (!gate.isImpaired(origin) && list.at(-1)!.untilMs > nowMs && hasPacedRoom(origin)) return true;
    }
    return false;
  }

  /** Whether some queued delivery could start as soon as a slot is free. */
  function anyStartable(): boolean {
    for (const origin of queues.keys()) if (gate.hasRoom(origin)) return true;
    return false;
  }

  function startQueued(): void {
    // Entries moved to the back are visited again; each visit starts one delivery or finds its origin full.
    for (const [origin, items] of queues) {
      if (stopped || sending >= concurrency) return;
      if (!gate.hasRoom(origin)) continue;
      const item = items.shift()!;
      queued -= 1;
      queues.delete(origin);
      if (items.length > 0) queues.set(origin, items);
      // A lease that could run out before the attempt ends would let another worker send the
      // same event at the same time. Leave such a delivery alone: once its lease runs out,
      // whichever worker claims it next makes the attempt.
      if (item.leaseEndsAt - context.clock.now().getTime() < attemptTimeoutMs + LEASE_MARGIN_MS) {
        context.logger.warn(
          { event_id: item.delivery.eventId },
          'webhook delivery waited in the queue until its lease wore down; it is left for a new claim',
        );
        continue;
      }
      start(item);
    }
  }

  function start({ delivery, origin }: QueuedDelivery): void {
    let released = false;
    const sendStarted = performance.now();
    const gateToken = gate.started(origin);
    const markSent = (result?: SendResult) => {
      if (released) return;
      released = true;
      averageSendMs += (performance.now() - sendStarted - averageSendMs) * SEND_AVERAGE_WEIGHT;
      sending -= 1;
      if (gate.finished(origin, result, gateToken)) postpone(origin, dequeueOrigin(origin));
      const waiters = slotWaiters;
      slotWaiters = [];
      for (const resolve of waiters) resolve();
      startQueued();
      if (wakeWhenQueuedAtMost !== undefined && queued <= wakeWhenQueuedAtMost) wake?.();
      else if (paced.has(origin) && hasPacedRoom(origin)) wake?.();
    };
    sending += 1;
    const recorded: Promise<void> = attemptDelivery(deps, delivery, markSent)
      .then(() => undefined)
      .catch((error: unknown) => {
        // The attempt could not be recorded (database down): its lease expires and it is made again.
        reportFailure(context, error, { event_id: delivery.eventId }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        markSent();
        unrecorded.delete(recorded);
      });
    unrecorded.add(recorded);
  }

  /** Room for claimed deliveries; when every queued one waits for a busy receiver, at least the free slots. */
  function claimRoom(): number {
    const room = holdLimit() - sending - queued;
    return sending < concurrency && !anyStartable() ? Math.max(room, concurrency - sending) : room;
  }

  async function claim(room: number): Promise<number> {
    if (room <= 0 || stopped) return 0;
    const { lease, leaseEndsAt } = newLease();
    const claimed = await claimDueDeliveries(context.db, { ...lease, limit: room });
    const putOff = new Map<string, QueuedDelivery[]>();
    for (const delivery of claimed) {
      const item = { delivery, leaseEndsAt, origin: sender.originOf(delivery.url) };
      // Each receiver holds what it can start within the leases at its own pace (one probe when
      // impaired); the rest goes back to the database so that claims reach other receivers' rows.
      if (heldFor(item.origin) < holdCapacity(item.origin)) enqueue(item);
      else putOff.set(item.origin, [...(putOff.get(item.origin) ?? []), item]);
    }
    for (const [origin, items] of putOff) postpone(origin, items);
    startQueued();
    return claimed.length;
  }

  const runOnce = () => claim(claimRoom());

  function pause(milliseconds: number, untilQueuedAtMost?: number): Promise<void> {
    return new Promise((resolve) => {
      let endsAtMs = Date.now() + milliseconds;
      let timer = setTimeout(() => finish('timer'), milliseconds);
      function finish(cause: 'timer' | 'woken') {
        clearTimeout(timer);
        wake = undefined;
        pauseUntil = undefined;
        wakeWhenQueuedAtMost = undefined;
        options.sleepObserver?.awake(cause);
        resolve();
      }
      wake = () => finish('woken');
      pauseUntil = (until) => {
        if (until >= endsAtMs) return;
        endsAtMs = until;
        clearTimeout(timer);
        timer = setTimeout(() => finish('timer'), Math.max(0, until - Date.now()));
      };
      wakeWhenQueuedAtMost = untilQueuedAtMost;
      options.sleepObserver?.asleep(milliseconds);
    });
  }

  /** This worker scheduled something for `at` (a retry, a postponement): be awake by then. */
  function noteDue(at: Date): void {
    pauseUntil?.(Date.now() + Math.max(0, at.getTime() - context.clock.now().getTime()));
  }

  /** How long to sleep when nothing more is due now. */
  async function idlePauseMs(): Promise<number> {
    if (!notifications) return idlePollMs;
    if (!notifications.listening) return Math.min(idlePollMs, LISTENER_DOWN_POLL_MS);
    const now = context.clock.now();
    const due = await nextDeliveryDueAt(context.db, now);
    return due === undefined ? backstopMs : Math.min(backstopMs, Math.max(0, due.getTime() - now.getTime()));
  }

  function onNotified(): void {
    notified = true;
    wake?.();
  }

  async function runLoop(): Promise<void> {
    while (!stopped) {
      try {
        const limit = holdLimit();
        const room = claimRoom();
        // Claim in batches, but when slow attempts keep the limit low, as soon as there is room;
        // and at once when slots are free that nothing queued may take.
        const idleSlots = sending < concurrency && !anyStartable();
        if (!idleSlots && room < Math.min(claimThreshold, Math.max(1, limit - concurrency))) {
          await slotFreed();
          continue;
        }
        // Fewer than asked for means nothing else is due now: wait until something falls due or
        // is notified (or for the next poll), or, while a queue is held, until half of it has
        // started (a backlog put off at a receiver's pace falls due as fast as the receiver takes it).
        notified = false;
        const askedAt = Date.now();
        const claimed = await claim(room);
        context.health.up('database', askedAt);
        if (claimed < room && (await claimPacedEarly()) > 0) continue;
        if (claimed < room) {
          const pauseMs = await idlePauseMs();
          // The receivers' answers that came while the due time was read may have made room for an
          // early claim, and woke no one: the pause would last until the earliest booked time (or
          // the backstop), though the receiver could take the backlog now.
          if (!notified && !stopped && !canClaimPacedEarly())
            await pause(pauseMs, queued > 0 ? Math.floor(queued / 2) : undefined);
        }
      } catch (error) {
        reportFailure(context, error, {}, 'webhook worker could not claim deliveries');
        await pause(Math.min(idlePollMs, LISTENER_DOWN_POLL_MS));
      }
    }
  }

  async function stopWorker(): Promise<void> {
    stopped = true;
    for (const stop of unsubscribe) stop();
    unsubscribe = [];
    wake?.();
    await loop;
    // Claimed but never started: give them back now rather than when their lease runs out.
    const unstarted = [...queues.keys()].flatMap(dequeueOrigin);
    if (unstarted.length > 0) {
      await releaseDeliveries(
        context.db,
        unstarted.map(({ delivery }) => ({ id: delivery.deliveryId, leaseToken: delivery.leaseToken })),
      ).catch((error: unknown) =>
        context.logger.warn({ err: error }, 'could not release unstarted webhook deliveries; their leases will expire'),
      );
    }
    await Promise.allSettled([...unrecorded]);
    await sender.close();
  }

  return {
    name: 'webhook-delivery',
    get inFlight() {
      return sending;
    },
    start() {
      if (loop || stopped) return;
      if (notifications) {
        unsubscribe = [
          notifications.subscribe(WORK_CHANNEL, (payload) => {
            if (payload === WORK_TOPICS.webhookDelivery) onNotified();
          }),
          // Lost: poll from now on; back: whatever was notified meanwhile was missed.
          notifications.onListeningChange(onNotified),
        ];
      }
      loop = runLoop();
    },
    stop() {
      stopping ??= stopWorker();
      return stopping;
    },
    runOnce,
    async drain() {
      let attempts = 0;
      for (let round = 0; round < MAX_DRAIN_ROUNDS; round++) {
        const claimed = (await runOnce()) || (queued === 0 && unrecorded.size === 0 ? await claimPacedEarly() : 0);
        attempts += claimed;
        if (claimed === 0 && queued === 0 && unrecorded.size === 0) return attempts;
        if (sending > 0) await slotFreed();
        else await Promise.allSettled([...unrecorded]);
      }
      throw new Error(`webhook drain did not settle after ${MAX_DRAIN_ROUNDS} rounds`);
    },
  };
}
