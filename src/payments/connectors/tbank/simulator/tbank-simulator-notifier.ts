// The simulator's notifications, as T-Bank documents them: a signed JSON POST
// to the session's NotificationURL, repeated until the answer is HTTP 200 with
// the body `OK` (hourly for 24 hours in production; the schedule is a knob).
import { createSimulatorNotifier } from '../../acquirer-simulator-notifier.ts';
import { tbankToken } from '../tbank-token.ts';

/** T-Bank: "раз в час в течение 24 часов". */
export const TBANK_NOTIFICATION_RETRY_DELAYS_MS: readonly number[] = Array.from({ length: 24 }, () => 60 * 60 * 1000);

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
