// The OpenAPI document is a complete contract: every operation has a stable
// operationId, a summary, a declared tag, every error status it can answer with
// the codes it gives there, and examples; `paygate openapi` prints the very
// document /openapi.json serves. (Redocly's lint runs in `npm run lint`; every
// response of the suite is checked against the document by the setup file.)
import type { FastifyInstance } from 'fastify';
import diagnostics from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../src/http/api-scopes.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { runPaygateInProcess } from '../support/cli.ts';

interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: {
    'application/json'?: {
      schema: { properties?: { error?: { enum?: string[] } } };
      example?: unknown;
      examples?: unknown;
    };
  };
}
interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  requestBody?: { content: { 'application/json': { example?: unknown } } };
  responses: Record<string, Response>;
}
interface Document {
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
}

const OPERATION_IDS = [
  'blockCryptoWallet',
  'createBalanceTransfer',
  'createCryptoInvoice',
  'createCryptoPayout',
  'createCryptoPayoutBatch',
  'createCryptoRefund',
  'createCryptoWallet',
  'createPayment',
  'createPaymentRefund',
  'getAccount',
  'getBalance',
  'getCryptoInvoice',
  'getCryptoInvoiceQr',
  'getCryptoPayout',
  'getCryptoPayoutBatch',
  'getCryptoRefund',
  'getCryptoWallet',
  'getPayment',
  'getPaymentRefund',
  'getWebhookEndpoint',
  'getWebhookEvent',
  'listBalanceOperations',
  'listCryptoInvoices',
  'listCryptoPayouts',
  'listCryptoWallets',
  'listPaymentRefunds',
  'listPayments',
  'listWebhookAttempts',
  'listWebhookEvents',
  'quoteCryptoPayout',
  'resendWebhookEvent',
  'rotateWebhookSecret',
  'sendTestWebhook',
  'setWebhookEndpoint',
  'streamWebhookEvents',
  'testHelpersCryptoBlacklist',
  'testHelpersCryptoDeposit',
  'testHelpersCryptoDrainHotWalletTrx',
  'testHelpersCryptoExpireInvoice',
  'testHelpersCryptoFaucet',
  'testHelpersCryptoMineBlocks',
  'testHelpersCryptoNextTransferOutcome',
  'testHelpersCryptoReorg',
  'testHelpersCryptoWithdrawal',
  'testHelpersExpirePayment',
  'testHelpersFailPayment',
  'testHelpersPayPayment',
  'unblockCryptoWallet',
];

describe('the OpenAPI document as a contract', () => {
  let testApp: TestApp;
  let document: Document;
  const scopesByOperation = new Map<string, readonly ApiKeyScope[] | undefined>();
  const recordRoutes = (message: unknown) => {
    (message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        scopesByOperation.set(
          `${method.toLowerCase()} ${route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`,
          route.config?.scopes,
        );
      }
    });
  };

  beforeAll(async () => {
    diagnostics.subscribe('fastify.initialization', recordRoutes);
    try {
      testApp = await createTestApp('pglite');
    } finally {
      diagnostics.unsubscribe('fastify.initialization', recordRoutes);
    }
    document = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(() => testApp.close());

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );

  it('names every operation with a stable, unique camelCase operationId', () => {
    const ids = operations().map(({ operation }) => operation.operationId ?? '');
    expect([...ids].sort()).toEqual(OPERATION_IDS);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
  });

  it('gives every operation a summary and tags that the document describes', () => {
    const declared = new Set(document.tags.map((tag) => tag.name));
    for (const { path, method, operation } of operations()) {
      expect(operation.summary, `${method} ${path}`).toBeTruthy();
      expect(operation.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const tag of operation.tags ?? []) expect(declared, `${method} ${path}`).toContain(tag);
    }
    for (const tag of document.tags) expect(tag.description).toBeTruthy();
  });

  it('lists 401, 429 and 500 on every /v1 operation, each error status with its codes as an enum', () => {
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`;
      if (path.startsWith('/v1/'))
        expect(Object.keys(operation.responses), where).toEqual(expect.arrayContaining(['401', '429', '500']));
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        expect(
          response.content?.['application/json']?.schema.properties?.error?.enum?.length,
          `${where} ${status}`,
        ).toBeGreaterThan(0);
        expect(response.description, `${where} ${status}`).toMatch(/^`[a-z_]+`: /);
      }
      expect(operation.responses['429']?.headers, where).toHaveProperty('retry-after');
    }
  });

  it('documents 403 exactly on the operations whose scopes a key can lack', () => {
    for (const { path, method, operation } of operations()) {
      const scopes = scopesByOperation.get(`${method} ${path}`);
      expect(scopes, `${method} ${path}`).toBeDefined();
      const everyKeyMayCall = API_KEY_SCOPES.every((scope) => scopes!.includes(scope));
      expect('403' in operation.responses, `${method} ${path}`).toBe(!everyKeyMayCall);
    }
  });

  it('shows an example of every request body and every successful response', () => {
    for (const { path, method, operation } of operations()) {
      const where = `${method} ${path}`;
      if (operation.requestBody) expect(operation.requestBody.content['application/json'].example, where).toBeDefined();
      for (const [status, response] of Object.entries(operation.responses)) {
        // JSON, or the one media type a non-JSON answer (an SVG) documents.
        const media = response.content?.['application/json'] ?? Object.values(response.content ?? {})[0];
        expect(media?.example ?? media?.examples, `${where} ${status}`).toBeDefined();
        expect(response.description, `${where} ${status}`).not.toBe('Default Response');
      }
    }
  });

  it('`paygate openapi` prints the document that /openapi.json serves', async () => {
    const result = await runPaygateInProcess(['openapi'], {
      PAYGATE_PUBLIC_URL: testApp.context.config.publicUrl,
      PAYGATE_DATA_DIR: 'memory://',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(document);
  });
});
