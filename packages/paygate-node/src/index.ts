// @paygate/node: the typed client of the Paygate API (README.md of this package).
import { HttpClient, type PaygateOptions } from './http-client.ts';
import { createResources } from './resources.ts';
import { verifyWebhook, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from './webhooks.ts';

export class Paygate {
  readonly account;
  readonly payments;
  readonly crypto;
  readonly testHelpers;
  /** Webhook events and deliveries, the endpoint and its secret, and `verify` for a receiver. */
  readonly webhooks;

  constructor(options: PaygateOptions) {
    const resources = createResources(new HttpClient(options));
    this.account = resources.account;
    this.payments = resources.payments;
    this.crypto = resources.crypto;
    this.testHelpers = resources.testHelpers;
    this.webhooks = {
      events: resources.webhookEvents,
      endpoint: resources.webhookEndpoint,
      verify: <Data = Record<string, unknown>>(
        payload: string | Uint8Array,
        headers: WebhookHeaders,
        secret: string,
        verifyOptions?: VerifyOptions,
      ): WebhookEvent<Data> => verifyWebhook<Data>(payload, headers, secret, verifyOptions),
    };
  }
}

export { PaygateConnectionError, PaygateError, WebhookVerificationError } from './errors.ts';
export type { PaygateOptions } from './http-client.ts';
export type { EventStreamOptions, StreamedWebhookEvent } from './event-stream.ts';
export { PageList, type Page } from './pagination.ts';
export type { Method } from './resources.ts';
export type * from './types.ts';
export { verifyWebhook, type VerifyOptions, type WebhookEvent, type WebhookHeaders } from './webhooks.ts';
export type { components, operations, paths } from './openapi.ts';
