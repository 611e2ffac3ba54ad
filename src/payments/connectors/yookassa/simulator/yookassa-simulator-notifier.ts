// The simulator's notifications, as YooKassa documents them ("Входящие
// уведомления"): a JSON POST `{"type":"notification","event":…,"object":…}` to
// the shop's notification URL, repeated until the answer is HTTP 200 — YooKassa
// keeps trying for 24 hours. The pauses between tries are a knob (tests use
// milliseconds).
import { createSimulatorNotifier } from '../../acquirer-simulator-notifier.ts';

/** Pauses between repeats, growing, that together cover YooKassa's 24 hours. */
export const YOOKASSA_NOTIFICATION_RETRY_DELAYS_MS: readonly number[] = [
  ...[1, 5, 10, 30].map((minutes) => minutes * 60_000),
  ...Array.from({ length: 23 }, () => 60 * 60_000),
];

/** Any HTTP 200 accepts a notification. */
export function createNotifier(options: { enabled: boolean; retryDelaysMs: readonly number[] }) {
  return createSimulatorNotifier({ ...options, accepted: (status) => status === 200 });
}
