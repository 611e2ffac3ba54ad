// Prometheus metrics of custody reconciliation, read from its table when
// scraped, so every process serving /metrics reports the latest run whichever
// worker made it. USDT as a float is fine here: a gauge for alerting, never money kept.
import { Gauge } from 'prom-client';
import type { AppContext } from '../../context.ts';
import { findBookState, latestReconciliations } from './custody-repository.ts';
import { CUSTODY_BOOKS } from './reconciliation-service.ts';

const DIFFERENCE_METRIC = 'paygate_custody_difference';
const PAUSED_METRIC = 'paygate_custody_signing_paused';
const MICRO_PER_USDT = 1_000_000;

/** Registers the gauges once per registry. */
export function registerCustodyMetrics(context: Pick<AppContext, 'db' | 'metrics' | 'logger'>): void {
  if (context.metrics.getSingleMetric(DIFFERENCE_METRIC)) return;
  new Gauge({
    name: DIFFERENCE_METRIC,
    help: 'USDT on chain minus what the ledger says should be there, at the latest custody reconciliation that could read both (below zero: missing).',
    labelNames: ['book', 'asset'],
    registers: [context.metrics],
    async collect() {
      this.reset();
      try {
        for (const book of CUSTODY_BOOKS) {
          const [latest] = await latestReconciliations(context.db, book, 'USDT', { limit: 1, judged: true });
          if (latest?.difference_micro != null)
            this.set({ book, asset: 'USDT' }, Number(latest.difference_micro) / MICRO_PER_USDT);
        }
      } catch (error) {
        context.logger.warn({ err: error }, 'could not read the latest custody reconciliation');
      }
    },
  });
  new Gauge({
    name: PAUSED_METRIC,
    help: 'Whether signing of the book is paused by a custody shortfall until an operator acknowledges it (1) or not (0).',
    labelNames: ['book'],
    registers: [context.metrics],
    async collect() {
      try {
        for (const book of CUSTODY_BOOKS)
          this.set({ book }, (await findBookState(context.db, book, 'USDT'))?.paused_since ? 1 : 0);
      } catch (error) {
        context.logger.warn({ err: error }, 'could not read the custody pause state');
      }
    },
  });
}
