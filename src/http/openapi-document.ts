// What the OpenAPI document says beside the routes: info, tags and security.
// The routes describe themselves (operationId, schemas, error responses from
// error-responses.ts); /openapi.json and `paygate openapi` serve the whole.
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { Config } from '../config.ts';
import { PAYGATE_VERSION } from '../version.ts';

const DESCRIPTION = `Merchant payment gateway: RUB payments, USDT (TRC20) receiving and payouts, balances, webhooks.

Every operation needs \`Authorization: Bearer <API key>\`; a key acts for one shop and carries scopes.
Every failure answers \`{"error": code, "message": text}\`: branch on \`error\`, show \`message\` to humans.
Each operation lists the statuses it can answer and, for each, the codes it can give there.
Requests are limited per key per minute; a 429 carries \`Retry-After\` (seconds).
Lists take \`limit\` (1..100, default 20) and the opaque \`cursor\` of the previous page's \`next_cursor\`, newest first.`;

const TAGS = [
  { name: 'account', description: 'Who the presented API key acts for: merchant, shop, mode and scopes.' },
  { name: 'payments', description: 'One-time RUB payments paid by the payer on the hosted payment page.' },
  {
    name: 'test helpers',
    description:
      'Sandbox shops only: drive a payment as the acquirer or the clock would, and the simulated TRON chain as payers and block producers would.',
  },
  {
    name: 'webhooks',
    description:
      'Signed event deliveries: the event log with its attempts, resend, the endpoint and the signing secret.',
  },
  {
    name: 'balance',
    description:
      "The merchant's accounts in the double-entry ledger: balances, transfers between them, operation history.",
  },
  {
    name: 'crypto invoices',
    description:
      'USDT (TRC20) invoices: a fresh deposit address per invoice, paid when the deposits are final on chain.',
  },
  {
    name: 'crypto wallets',
    description:
      'Static USDT (TRC20) wallets: a permanent deposit address per client; blocked wallets hold their deposits.',
  },
  {
    name: 'crypto payouts',
    description:
      'USDT (TRC20) payouts from the balance to any address, one at a time or in batches of up to 500; total_debit is reserved at acceptance.',
  },
  {
    name: 'crypto refunds',
    description:
      'Received USDT sent back minus the network fee: one deposit (credited, or held at a blocked wallet) or an invoice’s credited deposits; each deposit at most once.',
  },
];

/** @fastify/swagger's options: everything in the document that is not a route. */
export function openApiOptions(config: Pick<Config, 'publicUrl'>): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Paygate API',
        version: PAYGATE_VERSION,
        description: DESCRIPTION,
        // The project is not published under an open licence.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: config.publicUrl, description: 'This gateway (PAYGATE_PUBLIC_URL)' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: sk_test_… (sandbox shop) or sk_live_…',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
  };
}
