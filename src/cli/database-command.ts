// Runs a CLI command's work against the configured database with a context like the server's.
import { Registry } from 'prom-client';
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { loadKeyring } from '../kms/load-keyring.ts';
import { createLogger } from '../logger.ts';
import { openConfiguredDatabase } from '../runtime.ts';

export async function withCliContext<T>(config: Config, work: (context: AppContext) => Promise<T>): Promise<T> {
  const keyring = await loadKeyring(config);
  const handle = await openConfiguredDatabase(config, { shortLived: true });
  const context: AppContext = {
    db: handle.db,
    backend: handle.backend,
    clock: systemClock,
    config,
    metrics: new Registry(),
    logger: createLogger({ logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }),
    keyring,
  };
  try {
    return await work(context);
  } finally {
    await handle.close();
  }
}
