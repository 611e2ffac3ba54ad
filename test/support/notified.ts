// Waiting for a database notification to reach an instance: a test that makes a
// change elsewhere waits for this instead of for time.
import { API_KEYS_CHANNEL, type Notifications } from '../../src/db/notifications.ts';

/** Resolves when `notifications` hand their subscribers `payload` on the API-keys channel. */
export function notified(notifications: Notifications, payload: string): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe = notifications.subscribe(API_KEYS_CHANNEL, (received) => {
      if (received !== payload) return;
      unsubscribe();
      resolve();
    });
  });
}
