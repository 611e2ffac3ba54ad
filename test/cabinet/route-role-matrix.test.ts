// Every cabinet route × every role, read from the route table the cabinet registered
// (so routes other areas add are covered without naming them here): a permission
// route answers 403 exactly when the role lacks its permission, a signed-in route
// never does, a public route opens signed out; nothing but public routes opens
// without a session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, ROLES, roleCan, type Role } from '../../src/cabinet/roles.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { cabinetRoutes, concretePath, describeRoute, type CabinetRoute } from './cabinet-route-table.ts';

/** A signed-in, freshly stepped-up client holding the CSRF token of a page it just opened. */
async function readyClient(testApp: TestApp, person: CabinetPerson, client?: CabinetClient): Promise<CabinetClient> {
  if (client && (await client.get('/cabinet/account')).statusCode === 200) return client;
  const fresh = new CabinetClient(testApp.app);
  const signedIn = await fresh.signIn(person.email);
  expect(signedIn.statusCode, signedIn.body).toBe(303);
  expect((await fresh.get('/cabinet/account')).statusCode).toBe(200);
  return fresh;
}

async function request(client: CabinetClient, route: CabinetRoute, shopId: string) {
  const path = concretePath(route, shopId);
  return route.method === 'GET' ? client.get(path) : client.post(path);
}

describe.each(backends)('cabinet route × role matrix on %s', (backend) => {
  let testApp: TestApp;
  let owner: CabinetPerson;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    owner = await createOwner(testApp);
  });
  afterAll(() => testApp?.close());

  it('the route table is not empty, holds only GET and POST, and every permission named is in PERMISSIONS', () => {
    const routes = cabinetRoutes(testApp);
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      expect(['GET', 'POST'], describeRoute(route)).toContain(route.method);
      if (typeof route.access === 'object')
        expect(PERMISSIONS, describeRoute(route)).toEqual(
          expect.arrayContaining([route.access.permission, route.access.alsoPermission ?? route.access.permission]),
        );
      else expect(['public', 'second-factor', 'signed-in'], describeRoute(route)).toContain(route.access);
    }
  });

  it.each(ROLES)(
    'role %s: refused (403) exactly on the permission routes it lacks, and on no other route',
    { timeout: 600_000 },
    async (role: Role) => {
      const person = role === 'owner' ? owner : await addMember(testApp, owner, role);
      let client = await readyClient(testApp, person);
      const wrong: string[] = [];
      for (const route of cabinetRoutes(testApp)) {
        if (route.access === 'public' || route.access === 'second-factor') continue;
        client = await readyClient(testApp, person, client);
        const response = await request(client, route, person.shopId);
        const expected403 =
          typeof route.access === 'object' &&
          (!roleCan(role, route.access.permission) ||
            (route.access.alsoPermission !== undefined && !roleCan(role, route.access.alsoPermission)));
        if ((response.statusCode === 403) !== expected403)
          wrong.push(`${describeRoute(route)}: ${response.statusCode}, expected ${expected403 ? '' : 'not '}403`);
      }
      expect(wrong).toEqual([]);
    },
  );

  it('every public route opens signed out (public forms with their double-submit token)', async () => {
    const wrong: string[] = [];
    for (const route of cabinetRoutes(testApp).filter((each) => each.access === 'public')) {
      const client = new CabinetClient(testApp.app);
      await client.get('/cabinet/sign-in');
      const response = await request(client, route, owner.shopId);
      const toSignIn = String(response.headers.location ?? '').startsWith('/cabinet/sign-in?back=');
      if (response.statusCode === 403 || response.statusCode >= 500 || toSignIn)
        wrong.push(`${describeRoute(route)}: ${response.statusCode} ${String(response.headers.location ?? '')}`);
    }
    expect(wrong).toEqual([]);
  });

  it('every GET of a non-public route without a session is sent to sign-in (303) with itself as back', async () => {
    const wrong: string[] = [];
    for (const route of cabinetRoutes(testApp).filter((each) => each.method === 'GET' && each.access !== 'public')) {
      const path = concretePath(route, owner.shopId);
      const response = await new CabinetClient(testApp.app).get(path);
      const expected = `/cabinet/sign-in?back=${encodeURIComponent(path)}`;
      if (response.statusCode !== 303 || response.headers.location !== expected)
        wrong.push(`${describeRoute(route)}: ${response.statusCode} → ${String(response.headers.location)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('every POST of a non-public route without a session is refused: sent to sign-in, nothing done', async () => {
    const wrong: string[] = [];
    for (const route of cabinetRoutes(testApp).filter((each) => each.method === 'POST' && each.access !== 'public')) {
      const client = new CabinetClient(testApp.app);
      await client.get('/cabinet/sign-in');
      const response = await client.post(concretePath(route, owner.shopId));
      const toSignIn = String(response.headers.location ?? '').startsWith('/cabinet/sign-in?back=');
      if (!(response.statusCode === 303 && toSignIn) && response.statusCode !== 403)
        wrong.push(`${describeRoute(route)}: ${response.statusCode} → ${String(response.headers.location)}`);
    }
    expect(wrong).toEqual([]);
  });
});
