// The shape every periodic background job shares (payment expiry, charge
// reconciliation, ledger reservation expiry): run one pass, wait the interval,
// run again; a failed pass is logged and the next one comes all the same;
// `stop` waits for the pass in flight.
import type { Logger } from 'pino';
import type { Worker } from './context.ts';

export interface PollingWorker extends Worker {
  /** One pass; returns how many items it handled. */
  runOnce(): Promise<number>;
}

export function createPollingWorker(options: {
  readonly name: string;
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly runOnce: () => Promise<number>;
}): PollingWorker {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = options
        .runOnce()
        .catch((error: unknown) => options.logger.error({ err: error, worker: options.name }, `${options.name} pass failed`))
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, options.intervalMs);
  }

  return {
    name: options.name,
    runOnce: options.runOnce,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
