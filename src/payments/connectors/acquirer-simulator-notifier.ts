// The notification sender the acquirer simulators share: a JSON POST to the
// shop's URL, repeated on the provider's schedule until the provider's own
// idea of "accepted" holds (T-Bank wants HTTP 200 with the body `OK`, YooKassa
// any 200). Fault knobs lose, duplicate or reorder what one change sends.

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

export interface SimulatorNotifierOptions {
  readonly enabled: boolean;
  /** The pauses before each repeat; none left, the notification is given up. */
  readonly retryDelaysMs: readonly number[];
  /** Whether the shop's answer accepts the notification (else it is repeated). */
  accepted(status: number, body: string): boolean;
}

export function createSimulatorNotifier(options: SimulatorNotifierOptions) {
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
      return options.accepted(response.status, await response.text());
    } catch {
      return false;
    }
  }

  function send(url: string, body: Record<string, unknown>, afterFirst: () => void): void {
    const record = { url, body, attempts: 0, delivered: false };
    deliveries.push(record);
    const run = async (retryIndex: number): Promise<void> => {
      if (closed) return;
      record.attempts += 1;
      const ok = await attempt(url, body);
      if (record.attempts === 1) afterFirst();
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
    /**
     * Sends the notifications of one change, applying the fault knobs; `afterFirst`
     * runs once every copy has been tried once (or lost).
     */
    notify(url: string, bodies: readonly Record<string, unknown>[], afterFirst: () => void = () => {}): void {
      if (!options.enabled || !url) {
        afterFirst();
        return;
      }
      const ordered = faults.reverse ? [...bodies].reverse() : [...bodies];
      const copies = faults.duplicate ? 2 : 1;
      let pending = ordered.length * copies;
      const done = () => {
        pending -= 1;
        if (pending === 0) afterFirst();
      };
      for (const body of ordered) {
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
