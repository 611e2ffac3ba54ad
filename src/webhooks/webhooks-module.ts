// The webhooks module: the outbox other modules emit into, the delivery worker, the
// webhook API, and the signing secrets sealed at rest.
import type { AppContext } from '../context.ts';
import type { BuiltModule } from '../gateway-module.ts';
import { createDeliveryWorker } from './delivery-worker.ts';
import { createEventStreamHub } from './event-stream.ts';
import { emit, emitMany } from './outbox.ts';
import { webhookRoutes } from './webhook-routes.ts';
import { sealPlaintextWebhookSecrets } from './webhook-secrets.ts';

export type WebhooksModuleDeps = Pick<
  AppContext,
  'db' | 'clock' | 'config' | 'logger' | 'health' | 'metrics' | 'keyring' | 'notifications'
>;

/** What other modules and the runtime ask of webhooks. */
export interface WebhooksService {
  /** Writes an event (and its delivery) inside the caller's transaction. */
  readonly emit: typeof emit;
  readonly emitMany: typeof emitMany;
  /** Seals secrets stored in clear by versions before sealing existed; how many shops changed. Run at start. */
  sealPlaintextSecrets(): Promise<number>;
}

export function createWebhooksModule(deps: WebhooksModuleDeps): BuiltModule<WebhooksService> {
  const streams = createEventStreamHub(deps);
  return {
    module: {
      name: 'webhooks',
      routes: webhookRoutes(deps, streams),
      workers: () => [createDeliveryWorker(deps)],
      close: async () => streams.closeAll(),
    },
    service: { emit, emitMany, sealPlaintextSecrets: () => sealPlaintextWebhookSecrets(deps.db, deps.keyring) },
  };
}
