// Every route of the app and who may call it: the scopes of which a key needs
// one, or `public` for routes that take no API key. The scope matrix tests
// (test/*/…-403.test.ts) are generated from it, and test/http/route-table.test.ts
// fails when the app registers a route that has no row here.
import type { FastifyInstance } from 'fastify';
import type { ApiKeyScope } from '../../src/http/api-scopes.ts';

export type RouteModule =
  'merchants' | 'payments' | 'webhooks' | 'ledger' | 'crypto' | 'payouts' | 'refunds' | 'platform' | 'page';

export interface RouteRow {
  readonly module: RouteModule;
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly url: string;
  readonly scopes: readonly ApiKeyScope[] | 'public';
}

const ANY: readonly ApiKeyScope[] = ['payments', 'crypto', 'payouts', 'webhooks', 'read'];

export const ROUTE_TABLE: readonly RouteRow[] = [
  { module: 'merchants', method: 'GET', url: '/v1/account', scopes: ANY },

  { module: 'payments', method: 'POST', url: '/v1/payments', scopes: ['payments'] },
  { module: 'payments', method: 'GET', url: '/v1/payments', scopes: ['read', 'payments'] },
  { module: 'payments', method: 'GET', url: '/v1/payments/:payment_id', scopes: ['read', 'payments'] },
  { module: 'payments', method: 'POST', url: '/v1/payments/:payment_id/refunds', scopes: ['payments'] },
  { module: 'payments', method: 'GET', url: '/v1/payments/:payment_id/refunds', scopes: ['read', 'payments'] },
  {
    module: 'payments',
    method: 'GET',
    url: '/v1/payments/:payment_id/refunds/:refund_id',
    scopes: ['read', 'payments'],
  },
  { module: 'payments', method: 'POST', url: '/v1/test_helpers/payments/:payment_id/pay', scopes: ['payments'] },
  { module: 'payments', method: 'POST', url: '/v1/test_helpers/payments/:payment_id/fail', scopes: ['payments'] },
  { module: 'payments', method: 'POST', url: '/v1/test_helpers/payments/:payment_id/expire', scopes: ['payments'] },

  { module: 'webhooks', method: 'GET', url: '/v1/webhooks/events', scopes: ANY },
  { module: 'webhooks', method: 'GET', url: '/v1/webhooks/events/:event_id', scopes: ANY },
  { module: 'webhooks', method: 'GET', url: '/v1/webhooks/events/:event_id/attempts', scopes: ANY },
  { module: 'webhooks', method: 'POST', url: '/v1/webhooks/events/:event_id/resend', scopes: ['webhooks'] },
  { module: 'webhooks', method: 'GET', url: '/v1/webhooks/endpoint', scopes: ANY },
  { module: 'webhooks', method: 'PUT', url: '/v1/webhooks/endpoint', scopes: ['webhooks'] },
  { module: 'webhooks', method: 'POST', url: '/v1/webhooks/secret/rotate', scopes: ['webhooks'] },
  { module: 'webhooks', method: 'POST', url: '/v1/webhooks/test', scopes: ['webhooks'] },
  { module: 'webhooks', method: 'GET', url: '/v1/webhooks/stream', scopes: ['webhooks'] },

  { module: 'ledger', method: 'GET', url: '/v1/crypto/balance', scopes: ['read', 'crypto', 'payouts', 'payments'] },
  { module: 'ledger', method: 'POST', url: '/v1/crypto/balance/transfers', scopes: ['crypto', 'payouts'] },
  {
    module: 'ledger',
    method: 'GET',
    url: '/v1/crypto/balance/operations',
    scopes: ['read', 'crypto', 'payouts', 'payments'],
  },

  { module: 'crypto', method: 'POST', url: '/v1/crypto/invoices', scopes: ['crypto'] },
  { module: 'crypto', method: 'GET', url: '/v1/crypto/invoices', scopes: ['crypto'] },
  { module: 'crypto', method: 'GET', url: '/v1/crypto/invoices/:invoice_id', scopes: ['crypto'] },
  { module: 'crypto', method: 'GET', url: '/v1/crypto/invoices/:invoice_id/qr.svg', scopes: ['crypto'] },
  { module: 'crypto', method: 'POST', url: '/v1/crypto/wallets', scopes: ['crypto'] },
  { module: 'crypto', method: 'GET', url: '/v1/crypto/wallets', scopes: ['crypto'] },
  { module: 'crypto', method: 'GET', url: '/v1/crypto/wallets/:wallet_id', scopes: ['crypto'] },
  { module: 'crypto', method: 'POST', url: '/v1/crypto/wallets/:wallet_id/block', scopes: ['crypto'] },
  { module: 'crypto', method: 'POST', url: '/v1/crypto/wallets/:wallet_id/unblock', scopes: ['crypto'] },
  { module: 'payouts', method: 'POST', url: '/v1/crypto/payouts', scopes: ['payouts'] },
  { module: 'payouts', method: 'POST', url: '/v1/crypto/payouts/quote', scopes: ['payouts'] },
  { module: 'payouts', method: 'POST', url: '/v1/crypto/payouts/batch', scopes: ['payouts'] },
  { module: 'payouts', method: 'GET', url: '/v1/crypto/payouts', scopes: ['read', 'payouts'] },
  { module: 'payouts', method: 'GET', url: '/v1/crypto/payouts/:payout_id', scopes: ['read', 'payouts'] },
  { module: 'payouts', method: 'GET', url: '/v1/crypto/payouts/batch/:batch_id', scopes: ['read', 'payouts'] },
  { module: 'refunds', method: 'POST', url: '/v1/crypto/refunds', scopes: ['crypto'] },
  { module: 'refunds', method: 'GET', url: '/v1/crypto/refunds/:refund_id', scopes: ['read', 'crypto'] },
  { module: 'crypto', method: 'POST', url: '/v1/test_helpers/crypto/deposits', scopes: ['crypto'] },
  { module: 'crypto', method: 'POST', url: '/v1/test_helpers/crypto/blocks', scopes: ['crypto'] },
  { module: 'crypto', method: 'POST', url: '/v1/test_helpers/crypto/reorg', scopes: ['crypto'] },
  {
    module: 'crypto',
    method: 'POST',
    url: '/v1/test_helpers/crypto/next_transfer_outcome',
    scopes: ['crypto', 'payouts'],
  },
  {
    module: 'crypto',
    method: 'POST',
    url: '/v1/test_helpers/crypto/hot_wallet/drain_trx',
    scopes: ['crypto', 'payouts'],
  },
  { module: 'crypto', method: 'POST', url: '/v1/test_helpers/crypto/faucet', scopes: ['crypto', 'payouts'] },
  { module: 'crypto', method: 'POST', url: '/v1/test_helpers/crypto/blacklist', scopes: ['crypto', 'payouts'] },
  { module: 'crypto', method: 'POST', url: '/v1/test_helpers/crypto/invoices/:invoice_id/expire', scopes: ['crypto'] },
  { module: 'payouts', method: 'POST', url: '/v1/test_helpers/crypto/withdrawals', scopes: ['payouts'] },

  { module: 'platform', method: 'GET', url: '/healthz', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/readyz', scopes: 'public' },
  // Needs PAYGATE_METRICS_TOKEN when that is set; never an API key.
  { module: 'platform', method: 'GET', url: '/metrics', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/openapi.json', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/docs', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/docs/*', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/docs/json', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/docs/yaml', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/docs/static/index.html', scopes: 'public' },
  { module: 'platform', method: 'GET', url: '/docs/static/swagger-initializer.js', scopes: 'public' },

  // The payer's page: no API key; CSRF and per-address limits instead.
  { module: 'page', method: 'GET', url: '/pay/:order_code', scopes: 'public' },
  { module: 'page', method: 'POST', url: '/pay/:order_code/card', scopes: 'public' },
  { module: 'page', method: 'POST', url: '/pay/:order_code/qr', scopes: 'public' },
  { module: 'page', method: 'POST', url: '/pay/:order_code/confirm', scopes: 'public' },
  { module: 'page', method: 'GET', url: '/pay/:order_code/return', scopes: 'public' },
  { module: 'page', method: 'GET', url: '/pay/:order_code/status', scopes: 'public' },
  { module: 'page', method: 'POST', url: '/acquirers/:provider/notifications/:connection_id', scopes: 'public' },
  // The hosted crypto invoice page and the status its script polls.
  { module: 'page', method: 'GET', url: '/pay/crypto/:invoice_id', scopes: 'public' },
  { module: 'page', method: 'GET', url: '/pay/crypto/:invoice_id/status', scopes: 'public' },
  // Any other /pay path: the page's own 404 in the payer's language.
  { module: 'page', method: 'GET', url: '/pay', scopes: 'public' },
  { module: 'page', method: 'POST', url: '/pay', scopes: 'public' },
  { module: 'page', method: 'GET', url: '/pay/*', scopes: 'public' },
  { module: 'page', method: 'POST', url: '/pay/*', scopes: 'public' },
];

export const routeKey = (route: { method: string; url: string }): string => `${route.method} ${route.url}`;

/**
 * The routes the app registered, as "METHOD /path", read from Fastify's route
 * tree (printRoutes). HEAD routes Fastify adds for every GET are left out.
 */
export function registeredRoutes(app: FastifyInstance): string[] {
  const routes: string[] = [];
  const parents: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    parents.length = depth;
    // A wildcard node prints as a bare "*" under its parent "/docs"; the route is "/docs/*".
    const segment = match[2] === '*' ? '/*' : match[2]!;
    const path = `${parents.join('')}${segment}`;
    parents.push(segment);
    const methods = (match[3] ?? '').split(', ').filter((method) => method !== '' && method !== 'HEAD');
    for (const method of methods) routes.push(`${method} ${path === '' ? '/' : path}`);
  }
  return routes.sort();
}
