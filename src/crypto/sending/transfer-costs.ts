// What outgoing transfers cost, summed per UTC day (docs/payouts.md "Costs"):
// for `/metrics` (today's sums, read from the table when scraped, so every
// process reports them whichever worker sent) and for the operator's custody
// view (`paygate crypto costs`). Each transfer's figures come from its receipt
// (transfer-finisher.ts). TRX and USDT as floats in gauges only: for
// alerting, never money kept.
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Executor } from '../../db/transaction.ts';
import { dailyCosts, type DailyCostRow } from './sending-repository.ts';
import type { SendingTables } from './sending-tables.ts';

export type { DailyCostRow };

const DAY_MS = 86_400_000;
const SUN_PER_TRX = 1_000_000;
const MICRO_PER_USDT = 1_000_000;
/** The most days one view sums. */
export const COST_DAYS_MAX = 366;

const ENERGY_METRIC = 'paygate_outgoing_energy_today';
const BURNED_METRIC = 'paygate_outgoing_trx_burned_today';
const BANDWIDTH_METRIC = 'paygate_outgoing_bandwidth_today';
const RENTAL_METRIC = 'paygate_outgoing_energy_rental_trx_today';
const COST_METRIC = 'paygate_outgoing_cost_usdt_today';

/** The start of the UTC day of `at`. */
function utcDayStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** Per chain and UTC day, the costs of the `days` days up to and including today (of `clock`). */
export async function costsOfLastDays(
  db: Executor<SendingTables>,
  clock: Clock,
  days: number,
): Promise<DailyCostRow[]> {
  if (!Number.isInteger(days) || days < 1 || days > COST_DAYS_MAX)
    throw new RangeError(`days must be 1..${COST_DAYS_MAX}, got ${days}`);
  const tomorrow = new Date(utcDayStart(clock.now()).getTime() + DAY_MS);
  return dailyCosts(db, new Date(tomorrow.getTime() - days * DAY_MS), tomorrow);
}

/** Registers today's cost gauges once per registry. */
export function registerTransferCostMetrics(context: {
  readonly db: Executor<SendingTables>;
  readonly clock: Clock;
  readonly metrics: Registry;
  readonly logger: Pick<Logger, 'warn'>;
}): void {
  if (context.metrics.getSingleMetric(COST_METRIC)) return;
  // The gauges of one scrape, collected together, share one read.
  let reading: Promise<DailyCostRow[]> | undefined;
  const today = (): Promise<DailyCostRow[]> => {
    reading ??= costsOfLastDays(context.db, context.clock, 1).finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const gauge = (
    name: string,
    help: string,
    labelNames: readonly string[],
    fill: (gauge: Gauge, row: DailyCostRow) => void,
  ): void => {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [context.metrics],
      async collect() {
        this.reset();
        try {
          for (const row of await today()) fill(this, row);
        } catch (error) {
          context.logger.warn({ err: error }, 'could not read the outgoing transfer costs of today');
        }
      },
    });
  };
  gauge(
    ENERGY_METRIC,
    'Energy used today (UTC) by outgoing transfers final today, by where it came from (staked, delegated, rented, burned, mixed).',
    ['chain', 'source'],
    (metric, row) => {
      const sources: [string, bigint][] = [
        ['staked', row.energy_staked],
        ['delegated', row.energy_delegated],
        ['rented', row.energy_rented],
        ['burned', row.energy_burned_source],
        ['mixed', row.energy_mixed],
      ];
      for (const [source, energy] of sources) metric.set({ chain: row.chain, source }, Number(energy));
    },
  );
  gauge(
    BURNED_METRIC,
    'TRX burned today (UTC) for energy and bandwidth by outgoing transfers final today.',
    ['chain'],
    (metric, row) => metric.set({ chain: row.chain }, Number(row.energy_fee_sun + row.bandwidth_fee_sun) / SUN_PER_TRX),
  );
  gauge(
    BANDWIDTH_METRIC,
    'Bandwidth (bytes) used today (UTC) by outgoing transfers final today.',
    ['chain'],
    (metric, row) => metric.set({ chain: row.chain }, Number(row.bandwidth_used)),
  );
  gauge(
    RENTAL_METRIC,
    'TRX paid today (UTC) to rent energy for outgoing transfers final today.',
    ['chain'],
    (metric, row) => metric.set({ chain: row.chain }, Number(row.rental_sun) / SUN_PER_TRX),
  );
  gauge(
    COST_METRIC,
    'What outgoing transfers final today (UTC) cost: TRX burned plus rentals, in USDT at PAYGATE_TRX_USDT_RATE.',
    ['chain'],
    (metric, row) => metric.set({ chain: row.chain }, Number(row.cost_micro) / MICRO_PER_USDT),
  );
}
