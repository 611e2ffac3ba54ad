// The retention module: append-only tables that age out are archived to files
// and then removed, by an hourly worker and by `paygate retention run`
// (docs/operations.md, "Retention and archive"). The tables' owners say which
// rows are past retention (retention-source.ts) and modules.ts hands their
// sources in; ledger entries and payments are never among them.
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import { createPollingWorker } from '../polling-worker.ts';
import type { RetentionSource } from './retention-source.ts';
import { runRetention, type RetentionDeps } from './retention-service.ts';

/** A pass an hour; a pass archives at most this many units per table (the rest waits for the next pass). */
const PACE = { intervalMs: 3_600_000, unitsPerSourceMax: 20 };

export type RetentionModuleDeps = Pick<AppContext, 'db' | 'clock' | 'logger' | 'health' | 'config'> & {
  /** The tables that age out, each from the module that owns it (modules.ts retentionSources). */
  readonly sources: readonly RetentionSource[];
};

export function retentionDeps(deps: RetentionModuleDeps): RetentionDeps {
  return {
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger,
    archiveDir: deps.config.archiveDir,
    sources: deps.sources,
  };
}

export function createRetentionModule(deps: RetentionModuleDeps): BuiltModule<undefined> {
  const retention = retentionDeps(deps);
  return {
    module: {
      name: 'retention',
      workers: () => [
        createPollingWorker({
          name: 'retention',
          intervalMs: PACE.intervalMs,
          logger: deps.logger,
          health: deps.health,
          async runOnce() {
            const report = await runRetention(retention, { unitsPerSourceMax: PACE.unitsPerSourceMax });
            return report.ran ? report.archived.length : 0;
          },
        }),
      ],
    },
    service: undefined,
  };
}
