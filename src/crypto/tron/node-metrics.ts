// Prometheus metrics of the TRON node requests, per node, registered once per
// registry. The node label is the URL's origin: a path prefix may hold an
// access token and the API key is a header, so neither ever reaches a label.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { NodeRequestRecord } from './node-transport.ts';

const REQUESTS_METRIC = 'paygate_tron_node_requests_total';
const DURATION_METRIC = 'paygate_tron_node_request_duration_seconds';

/** The metric `name` of the registry, made by `make` when the registry has none yet (one per registry). */
export function registeredMetric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** The transport's onRequest, counting into `registry`. */
export function nodeRequestMetrics(registry: Registry): (record: NodeRequestRecord) => void {
  const requests = registeredMetric(
    registry,
    REQUESTS_METRIC,
    () =>
      new Counter({
        name: REQUESTS_METRIC,
        help: 'Requests sent to each TRON node (origin), by outcome: ok, rate_limited (429 or a rate-limit answer), failed (retryable), refused (the node refused the request).',
        labelNames: ['node', 'outcome'],
        registers: [registry],
      }),
  );
  const duration = registeredMetric(
    registry,
    DURATION_METRIC,
    () =>
      new Histogram({
        name: DURATION_METRIC,
        help: 'Time from sending a request to a TRON node (origin) to its whole answer, whatever the outcome; waiting for budget not included.',
        labelNames: ['node'],
        buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
        registers: [registry],
      }),
  );
  return (record) => {
    requests.inc({ node: record.node, outcome: record.outcome });
    duration.observe({ node: record.node }, record.durationMs / 1000);
  };
}
