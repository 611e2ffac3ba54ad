import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_SCOPES } from '../../src/http/api-scopes.ts';
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
    // The cabinet's routes have their own table and matrix (test/cabinet/route-role-matrix.test.ts).
    const apiRoutes = registeredRoutes(testApp.app).filter((route) => !route.split(' ')[1]!.startsWith('/cabinet'));
    expect(apiRoutes).toEqual([...tableKeys].sort());
  });

  it('the OpenAPI document lists 403 on exactly the /v1 routes that some scope may not call', () => {
    const document = testApp.app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const row of ROUTE_TABLE) {
      if (row.scopes === 'public') continue;
      const path = row.url.replace(/:([a-z_]+)/g, '{$1}');
      const responses = document.paths[path]?.[row.method.toLowerCase()]?.responses ?? {};
      expect('403' in responses, routeKey(row)).toBe(row.scopes.length < API_KEY_SCOPES.length);
    }
  });

  it('every /v1 route names the scopes that may call it, and no other route takes an API key', () => {
    for (const row of ROUTE_TABLE) {
      if (row.url.startsWith('/v1/')) expect(row.scopes, routeKey(row)).not.toBe('public');
      else expect(row.scopes, routeKey(row)).toBe('public');
    }
  });
});
