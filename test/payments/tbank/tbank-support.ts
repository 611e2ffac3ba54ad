// The T-Bank tests' documented examples (fixtures/tbank-docs-examples.json).
import { readFileSync } from 'node:fs';

export interface DocsExamples {
  readonly source: string;
  readonly tokenExample: { password: string; token: string; request: Record<string, unknown> };
  readonly notificationTokenExample: { password: string; notification: Record<string, unknown> };
  readonly methods: Record<
    'Init' | 'GetState' | 'GetQr' | 'CheckOrder' | 'Cancel',
    {
      request: Record<string, unknown>;
      response: Record<string, unknown>;
      notSimulated?: Record<string, string>;
      notSimulatedInPayments?: Record<string, string>;
    }
  >;
}

export const docs = JSON.parse(
  readFileSync(new URL('./fixtures/tbank-docs-examples.json', import.meta.url), 'utf8'),
) as DocsExamples;
