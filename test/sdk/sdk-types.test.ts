// @paygate/node keeps up with the gateway: its committed types are what
// openapi-typescript generates from the live /openapi.json, every operation of
// that document has a method, and the User-Agent's version is the package's.
import { readFile } from 'node:fs/promises';
import { Paygate } from '@paygate/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSdkTypes, SDK_TYPES_FILE } from '../../packages/paygate-node/scripts/generate-types.ts';
import { SDK_VERSION } from '../../packages/paygate-node/src/version.ts';
import { createTestApp, type TestApp } from '../support/app.ts';

/** Every method in the client's tree, by the operationId it is tagged with. */
function methodsByOperation(node: object, path: string, found: Map<string, string>): Map<string, string> {
  for (const [name, value] of Object.entries(node)) {
    if (typeof value === 'function' && 'operationId' in value) found.set(String(value.operationId), `${path}.${name}`);
    else if (typeof value === 'object' && value !== null) methodsByOperation(value, `${path}.${name}`, found);
  }
  return found;
}

describe('the SDK against the gateway it was generated from', () => {
  let testApp: TestApp;
  let document: { paths: Record<string, Record<string, { operationId?: string }>> };
  beforeAll(async () => {
    testApp = await createTestApp('pglite');
    document = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  afterAll(() => testApp.close());

  it('has the types openapi-typescript generates from the live /openapi.json (run `npm run generate:sdk` after changing a route)', async () => {
    expect(await generateSdkTypes(document)).toBe(await readFile(SDK_TYPES_FILE, 'utf8'));
  });

  it('has a method for every operationId of the document, and none for an operation the document lacks', () => {
    const operations = Object.values(document.paths).flatMap((item) =>
      Object.values(item).flatMap((operation) => (operation.operationId === undefined ? [] : [operation.operationId])),
    );
    expect(operations.length).toBeGreaterThan(40);
    const methods = methodsByOperation(
      new Paygate({ baseUrl: 'http://127.0.0.1:1', apiKey: 'pg_test' }),
      'paygate',
      new Map(),
    );
    expect(operations.filter((operationId) => !methods.has(operationId))).toEqual([]);
    expect([...methods.keys()].toSorted()).toEqual(operations.toSorted());
    expect(methods.get('listCryptoPayouts')).toBe('paygate.crypto.payouts.list');
    expect(methods.get('createPayment')).toBe('paygate.payments.create');
  });

  it("sends the package's own version in its User-Agent", async () => {
    const manifest = JSON.parse(
      await readFile(new URL('../../packages/paygate-node/package.json', import.meta.url), 'utf8'),
    );
    expect(SDK_VERSION).toBe(manifest.version);
  });
});
