// Prometheus metrics of the sign-once executor, registered once per registry.
import { Counter, Gauge, type Registry } from 'prom-client';
import { registeredMetric } from '../tron/node-metrics.ts';

const FINAL_METRIC = 'paygate_outgoing_transfers_final_total';
const WAITING_METRIC = 'paygate_outgoing_transfers_waiting_for_funds';
const EXPIRED_METRIC = 'paygate_outgoing_attempts_expired_total';
const BURN_CAP_METRIC = 'paygate_outgoing_transfers_waiting_for_burn_cap';
const UNSIGNABLE_METRIC = 'paygate_outgoing_transfers_unsignable_total';

export interface SendingMetrics {
  recordPass(
    chain: string,
    pass: {
      readonly confirmed: number;
      readonly failed: number;
      readonly waitingForFunds: number;
      readonly waitingForBurnCap: number;
      readonly unsignable: number;
      readonly expiredAttempts: number;
    },
  ): void;
}

export function sendingMetrics(registry: Registry): SendingMetrics {
  const final = registeredMetric(
    registry,
    FINAL_METRIC,
    () =>
      new Counter({
        name: FINAL_METRIC,
        help: 'Outgoing on-chain transfers that became final, by chain and result (confirmed, failed).',
        labelNames: ['chain', 'result'],
        registers: [registry],
      }),
  );
  const waiting = registeredMetric(
    registry,
    WAITING_METRIC,
    () =>
      new Gauge({
        name: WAITING_METRIC,
        help: 'Outgoing transfers left queued at the last pass because the sending address (the hot wallet) is short of USDT, TRX or energy.',
        labelNames: ['chain'],
        registers: [registry],
      }),
  );
  const expired = registeredMetric(
    registry,
    EXPIRED_METRIC,
    () =>
      new Counter({
        name: EXPIRED_METRIC,
        help: 'Signed transactions proven never to land (expired, not on chain): each is followed by a new attempt or a failure.',
        labelNames: ['chain'],
        registers: [registry],
      }),
  );
  const burnCap = registeredMetric(
    registry,
    BURN_CAP_METRIC,
    () =>
      new Gauge({
        name: BURN_CAP_METRIC,
        help: 'Outgoing transfers left queued, unsigned, at the last pass because each would burn more TRX than PAYGATE_TRON_MAX_BURN_TRX (an operator must stake, rent or raise the cap).',
        labelNames: ['chain'],
        registers: [registry],
      }),
  );
  const unsignable = registeredMetric(
    registry,
    UNSIGNABLE_METRIC,
    () =>
      new Counter({
        name: UNSIGNABLE_METRIC,
        help: 'Sightings of outgoing transfers the signing key cannot sign (it does not derive the sending address), each held unsigned and rechecked every 10 minutes: alert on any increase.',
        labelNames: ['chain'],
        registers: [registry],
      }),
  );
  return {
    recordPass(chain, pass) {
      if (pass.unsignable > 0) unsignable.inc({ chain }, pass.unsignable);
      burnCap.set({ chain }, pass.waitingForBurnCap);
      if (pass.confirmed > 0) final.inc({ chain, result: 'confirmed' }, pass.confirmed);
      if (pass.failed > 0) final.inc({ chain, result: 'failed' }, pass.failed);
      if (pass.expiredAttempts > 0) expired.inc({ chain }, pass.expiredAttempts);
      waiting.set({ chain }, pass.waitingForFunds);
    },
  };
}
