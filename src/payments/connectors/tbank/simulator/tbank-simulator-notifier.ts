// The simulator's notifications, as T-Bank documents them: a signed JSON POST
// to the session's NotificationURL, repeated until the answer is HTTP 200 with
// the body `OK` (hourly for 24 hours in production; the schedule is a knob).
// Fault knobs lose, duplicate or reorder them.
import { tbankToken } from '../tbank-token.ts';

/** T-Bank: "раз в час в течение 24 часов". */
export const TBANK_NOTIFICATION_RETRY_DELAYS_MS: readonly number[] = Array.from({ length: 24 }, () => 60 * 60 * 1000);
const ATTEMPT_TIMEOUT_MS = 10_000;

interface NotificationFaults {
  /** The next N notifications are never sent. */
  lose: number;
  /** Every notification is sent twice. */
  duplicate: boolean;
  /** Notifications queued together are sent last first. */
  reverse: boolean;
}

interface Delivery {
  readonly url: string;
  readonly body: Readonly<Record<string, unknown>>;
  readonly attempts: number;
  readonly delivered: boolean;
}

export function createNotifier(options: { enabled: boolean; retryDelaysMs: readonly number[] }) {
  const faults: NotificationFaults = { lose: 0, duplicate: false, reverse: false };
  const deliveries: Delivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  async function attempt(url: string, body: Record<string, unknown>): Promise<boolean> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      const answer = await response.text();
      return response.status === 200 && answer === 'OK';
    } catch {
      return false;
    }
  }

  function send(url: string, body: Record<string, unknown>, afterFirst?: () => void): void {
    const record = { url, body, attempts: 0, delivered: false };
    deliveries.push(record);
    const run = async (retryIndex: number): Promise<void> => {
      if (closed) return;
      record.attempts += 1;
      const ok = await attempt(url, body);
      if (record.attempts === 1) afterFirst?.();
      if (ok) {
        record.delivered = true;
        return;
      }
      const delayMs = options.retryDelaysMs[retryIndex];
      if (delayMs === undefined || closed) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void run(retryIndex + 1);
      }, delayMs);
      timers.add(timer);
    };
    void run(0);
  }

  return {
    faults,
    deliveries: deliveries as readonly Delivery[],
    /** Sends the notifications of one event (e.g. AUTHORIZED then CONFIRMED), applying the fault knobs. */
    notify(url: string, password: string, bodies: readonly Record<string, unknown>[], afterFirst?: () => void): void {
      if (!options.enabled || !url) {
        afterFirst?.();
        return;
      }
      const ordered = faults.reverse ? [...bodies].reverse() : [...bodies];
      let pending = ordered.length * (faults.duplicate ? 2 : 1);
      const done = () => {
        pending -= 1;
        if (pending === 0) afterFirst?.();
      };
      for (const unsigned of ordered) {
        const body = { ...unsigned, Token: tbankToken(unsigned, password) };
        const copies = faults.duplicate ? 2 : 1;
        for (let copy = 0; copy < copies; copy += 1) {
          if (faults.lose > 0) {
            faults.lose -= 1;
            done();
            continue;
          }
          send(url, body, done);
        }
      }
    },
    close(): void {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
