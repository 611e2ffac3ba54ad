// The daily comparison of each live connection's charges at the acquirer
// (`listCharges`, when the connector has it) with our attempts of the previous
// UTC day. Differences are not fixed here: they are counted in a Prometheus gauge
// and logged for the operator (a success we never applied is found and applied by
// the reconciliation worker's look-ups or a notification; one we applied that the
// acquirer does not list needs a person).
import { Gauge, type Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { createPollingWorker, type PollingWorker } from '../polling-worker.ts';
import { listAttemptsOfConnector, type AttemptRow } from './attempt-repository.ts';
import type { ProviderCharge } from './connectors/acquirer-connector.ts';
import { listRoutingConnections } from './connectors/acquirer-connections.ts';
import { connectorNameOf, connectorOf, type ConnectorDeps } from './connectors/connector-registry.ts';

const DIFFERENCES_METRIC = 'paygate_acquirer_reconciliation_differences';
/** Checked hourly; each connection is compared once per day, after the day ends. */
const PASS_INTERVAL_MS = 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;
const CONNECTIONS_MAX = 1_000;
/** Charges of one connection and one day read at most; a day beyond it is reported as truncated. */
const CHARGES_MAX = 50_000;

/** missing_success: the acquirer captured, our attempt is not succeeded; unconfirmed_success: the reverse; amount_mismatch. */
type Difference = 'missing_success' | 'unconfirmed_success' | 'amount_mismatch';
const DIFFERENCES: readonly Difference[] = ['missing_success', 'unconfirmed_success', 'amount_mismatch'];

type DailyDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'health' | 'metrics' | 'keyring'> &
  Pick<ConnectorDeps, 'acquirerProviders'>;

function differencesGauge(registry: Registry): Gauge<'provider' | 'connection' | 'kind'> {
  const existing = registry.getSingleMetric(DIFFERENCES_METRIC);
  if (existing) return existing as Gauge<'provider' | 'connection' | 'kind'>;
  return new Gauge({
    name: DIFFERENCES_METRIC,
    help: "Charges of the last compared day where the acquirer's list and our attempts disagree, by connection and kind.",
    labelNames: ['provider', 'connection', 'kind'],
    registers: [registry],
  });
}

/** The previous UTC day of `now`. */
function previousDay(now: Date): { from: Date; to: Date } {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { from: new Date(to.getTime() - DAY_MS), to };
}

/** Counts the differences between the acquirer's charges and our attempts. */
function compareCharges(
  charges: readonly ProviderCharge[],
  attempts: readonly AttemptRow[],
): Record<Difference, number> {
  const counts: Record<Difference, number> = { missing_success: 0, unconfirmed_success: 0, amount_mismatch: 0 };
  const byKey = new Map(attempts.map((attempt) => [attempt.charge_key, attempt]));
  const byReference = new Map(
    attempts.flatMap((attempt) => (attempt.provider_reference ? [[attempt.provider_reference, attempt] as const] : [])),
  );
  const matched = new Set<string>();
  for (const charge of charges) {
    const attempt =
      byReference.get(charge.providerReference) ?? (charge.chargeKey ? byKey.get(charge.chargeKey) : undefined);
    if (attempt) matched.add(attempt.id);
    if (charge.status !== 'succeeded') {
      if (attempt?.status === 'succeeded') counts.unconfirmed_success += 1;
      continue;
    }
    if (attempt?.status !== 'succeeded') counts.missing_success += 1;
    else if (attempt.amount_kopecks !== charge.amountKopecks) counts.amount_mismatch += 1;
  }
  for (const attempt of attempts)
    if (attempt.status === 'succeeded' && !matched.has(attempt.id)) counts.unconfirmed_success += 1;
  return counts;
}

export function createAcquirerDailyReconciliation(deps: DailyDeps): PollingWorker {
  const gauge = differencesGauge(deps.metrics);
  /** Connection id → the last day compared (its start, ms); per process: a restart compares the day again. */
  const compared = new Map<string, number>();

  async function compareConnection(connection: Parameters<typeof connectorOf>[1], day: { from: Date; to: Date }) {
    const connector = connectorOf(deps, connection);
    if (!connector?.listCharges) return false;
    const charges: ProviderCharge[] = [];
    for await (const charge of connector.listCharges(day)) {
      charges.push(charge);
      if (charges.length >= CHARGES_MAX) break;
    }
    const name = connectorNameOf(connection);
    const attempts = await listAttemptsOfConnector(deps.db, name, day, CHARGES_MAX);
    const counts = compareCharges(charges, attempts);
    for (const kind of DIFFERENCES)
      gauge.set({ provider: connection.provider, connection: connection.id, kind }, counts[kind]);
    const total = DIFFERENCES.reduce((sum, kind) => sum + counts[kind], 0);
    deps.logger[total > 0 ? 'warn' : 'info'](
      {
        connection_id: connection.id,
        provider: connection.provider,
        day: day.from.toISOString().slice(0, 10),
        charges: charges.length,
        attempts: attempts.length,
        truncated: charges.length >= CHARGES_MAX,
        ...counts,
      },
      total > 0 ? 'acquirer charges differ from our attempts' : 'acquirer charges match our attempts',
    );
    return true;
  }

  return createPollingWorker({
    name: 'acquirer-daily-reconciliation',
    intervalMs: PASS_INTERVAL_MS,
    logger: deps.logger,
    health: deps.health,
    async runOnce() {
      const day = previousDay(deps.clock.now());
      let done = 0;
      for (const connection of await listRoutingConnections(deps, CONNECTIONS_MAX)) {
        if (compared.get(connection.id) === day.from.getTime()) continue;
        try {
          if (await compareConnection(connection, day)) done += 1;
          compared.set(connection.id, day.from.getTime());
        } catch (error) {
          deps.logger.warn(
            { err: error, connection_id: connection.id },
            'daily acquirer comparison failed; retried next pass',
          );
        }
      }
      return done;
    },
  });
}
