// What request logging writes: never an API key, whether it came in the
// Authorization header or in a query string, and no query string at all.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { createLogger, urlForLog } from '../../src/logger.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { buildTestApp, createTestContext } from '../support/app.ts';
import { backends, type TestDatabase } from '../support/databases.ts';

describe.each(backends)('request logs on %s', (backend) => {
  const lines: string[] = [];
  let app: App;
  let database: TestDatabase;
  let key: string;
  beforeAll(async () => {
    const created = await createTestContext(backend);
    database = created.database;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const context = { ...created.context, logger: createLogger({ logLevel: 'debug' }, sink) };
    app = await buildTestApp(context);
    key = (await createMerchant(context, { name: 'Log shop', email: `log-${crypto.randomUUID()}@example.test` }))
      .api_key;
  });
  afterAll(async () => {
    await app.close();
    await database.close();
  });

  it('an API key in a query string or in the Authorization header appears in no log line', async () => {
    lines.length = 0;
    const withQueryKey = await app.inject({
      method: 'GET',
      url: `/v1/payments?api_key=${key}&status=paid`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(withQueryKey.statusCode).toBe(400); // api_key is not a parameter of the list
    await app.inject({ method: 'GET', url: `/v1/account?key=${key}` });
    await app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${key}` } });
    expect(lines.length).toBeGreaterThanOrEqual(6);
    const secretPart = key.slice('sk_test_'.length);
    expect(lines.filter((line) => line.includes(secretPart))).toEqual([]);
    const urls = lines.map((line) => JSON.parse(line).req?.url).filter(Boolean);
    expect(urls).toEqual(['/v1/payments?[redacted]', '/v1/account?[redacted]', '/v1/account']);
  });

  it('urlForLog keeps the path and drops any query, and caps the length', () => {
    expect(urlForLog('/pay/abc?lang=en')).toBe('/pay/abc?[redacted]');
    expect(urlForLog('/v1/payments')).toBe('/v1/payments');
    expect(urlForLog(`/${'a'.repeat(5000)}`)).toHaveLength(2049);
  });
});
