// Waiting for a condition with no deadline of its own: it polls until the
// condition holds, and the test's timeout is the only bound (a safety net, so
// that a slow or loaded machine never decides the result).
import { setTimeout as pause } from 'node:timers/promises';

/** Resolves with the first value of `read` that `holds` accepts, looking again every `pauseMs`. */
export async function eventually<T, U extends T>(
  read: () => T | Promise<T>,
  holds: (value: T) => value is U,
  pauseMs?: number,
): Promise<U>;
export async function eventually<T>(
  read: () => T | Promise<T>,
  holds: (value: T) => boolean,
  pauseMs?: number,
): Promise<T>;
export async function eventually<T>(
  read: () => T | Promise<T>,
  holds: (value: T) => boolean,
  pauseMs = 10,
): Promise<T> {
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    await pause(pauseMs);
  }
}
