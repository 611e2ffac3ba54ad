// Generates the scope matrix of one module (Unkey's 403 file per module): for
// every route of the module in the route table and every key scope, one test of
// the outcome. A scope the route accepts reaches the route and gets its success
// status; any other scope gets 403 forbidden, and a refused write changes nothing.
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { API_KEY_SCOPES } from '../../src/http/api-scopes.ts';
import { createTestApp, type TestApp } from './app.ts';
import { backends } from './databases.ts';
import { ROUTE_TABLE, routeKey, type RouteModule } from './route-table.ts';

export interface MatrixShop {
  readonly testApp: TestApp;
  readonly merchant: CreatedMerchant;
  /** The shop's key with every scope, to set up what a call needs. */
  readonly fullKey: string;
}

export interface RouteCall {
  /** The path (with real ids) and body of a call that succeeds for a key with an accepted scope. */
  request(shop: MatrixShop): Promise<Pick<InjectOptions, 'url' | 'payload'>>;
  readonly successStatus: number;
  /** The success is an endless stream (Server-Sent Events): only its status is read, then it is dropped. */
  readonly streamed?: boolean;
  /** For a write: what the call would change, read before and after a refused call. */
  observe?(shop: MatrixShop): Promise<unknown>;
}

export function authorized(shop: MatrixShop, options: InjectOptions) {
  const headers = {
    authorization: `Bearer ${shop.fullKey}`,
    ...(options.payload === undefined ? {} : { 'content-type': 'application/json' }),
  };
  return shop.testApp.app.inject({
    ...options,
    headers,
    payload: options.payload === undefined ? undefined : JSON.stringify(options.payload),
  });
}

export function scopeMatrix(module: RouteModule, calls: Readonly<Record<string, RouteCall>>): void {
  const rows = ROUTE_TABLE.filter((row) => row.module === module);

  describe.each(backends)(`${module} routes × key scopes on %s`, (backend) => {
    let testApp: TestApp;
    beforeAll(async () => {
      testApp = await createTestApp(backend);
    });
    afterAll(() => testApp.close());

    it('this file has a call for every route of the module in the route table', () => {
      expect(Object.keys(calls).sort()).toEqual(rows.map(routeKey).sort());
    });

    for (const row of rows) {
      if (row.scopes === 'public') continue;
      const accepted = row.scopes;
      const call = calls[routeKey(row)];
      for (const scope of API_KEY_SCOPES) {
        const allowed = accepted.includes(scope);
        const name = allowed
          ? `a key with only ${scope} may call ${routeKey(row)}`
          : `a key with only ${scope} is refused ${routeKey(row)} with 403 forbidden${call?.observe ? ', changing nothing' : ''}`;
        it(name, async () => {
          if (!call) throw new Error(`no call for ${routeKey(row)}`);
          const merchant = await testApp.createMerchant();
          const shop: MatrixShop = { testApp, merchant, fullKey: merchant.api_key };
          const scopedKey = await testApp.createKey(merchant.shop_id, [scope]);
          const { url, payload } = await call.request(shop);
          const before = allowed ? undefined : await call.observe?.(shop);
          const response = await authorized(
            { ...shop, fullKey: scopedKey },
            { method: row.method, url: url!, payload, ...(allowed && call.streamed ? { payloadAsStream: true } : {}) },
          );
          if (allowed && call.streamed) {
            expect(response.statusCode).toBe(call.successStatus);
            response.stream().destroy();
            return;
          }
          if (allowed) {
            expect(response.statusCode, response.body).toBe(call.successStatus);
            return;
          }
          expect(response.statusCode).toBe(403);
          expect(response.json()).toEqual({
            error: 'forbidden',
            message: `This API key lacks the scope this operation needs: ${accepted.join(' or ')}.`,
            request_id: response.headers['x-request-id'],
          });
          if (call.observe) expect(await call.observe(shop)).toEqual(before);
        });
      }
    }
  });
}
