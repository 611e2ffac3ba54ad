// The simulator's notifications, as T-Bank documents them: a signed JSON POST
// to the session's NotificationURL, repeated until the answer is HTTP 200 with
// the body `OK` (T-Bank's schedule below; a knob in tests).
import { createSimulatorNotifier } from '../../acquirer-simulator-notifier.ts';
import { tbankToken } from '../tbank-token.ts';

const HOUR_MS = 60 * 60 * 1000;
/**
 * "Уведомления об операциях": "в течение 24 часов каждый час, а затем раз в сутки в
 * течение месяца" (a month read as 30 days).
 */
export const TBANK_NOTIFICATION_RETRY_DELAYS_MS: readonly number[] = [
  ...Array.from({ length: 24 }, () => HOUR_MS),
  ...Array.from({ length: 30 }, () => 24 * HOUR_MS),
];

export function createNotifier(options: { enabled: boolean; retryDelaysMs: readonly number[] }) {
  const sender = createSimulatorNotifier({
    ...options,
    accepted: (status, body) => status === 200 && body === 'OK',
  });
  return {
    faults: sender.faults,
    deliveries: sender.deliveries,
    /** Sends the notifications of one event (e.g. AUTHORIZED then CONFIRMED), each signed, applying the fault knobs. */
    notify(url: string, password: string, bodies: readonly Record<string, unknown>[], afterFirst?: () => void): void {
      const signed = bodies.map((unsigned) => ({ ...unsigned, Token: tbankToken(unsigned, password) }));
      sender.notify(url, signed, afterFirst);
    },
    close: sender.close,
  };
}
