import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { ROUTE_TABLE, registeredRoutes, routeKey } from '../support/route-table.ts';

// The table is the source of the scope matrix; a route missing from it would go untested.
describe('the route table of the scope matrix', () => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp('pglite');
  });
  afterAll(() => testApp.close());

  it('lists exactly the routes the app registers, each once', () => {
    const tableKeys = ROUTE_TABLE.map(routeKey);
    expect(new Set(tableKeys).size).toBe(tableKeys.length);
    expect(registeredRoutes(testApp.app)).toEqual([...tableKeys].sort());
  });

  it('every /v1 route names the scopes that may call it, and no other route takes an API key', () => {
    for (const row of ROUTE_TABLE) {
      if (row.url.startsWith('/v1/')) expect(row.scopes, routeKey(row)).not.toBe('public');
      else expect(row.scopes, routeKey(row)).toBe('public');
    }
  });
});
