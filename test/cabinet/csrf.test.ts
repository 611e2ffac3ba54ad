// CSRF on every POST route of the cabinet's route table: a form without the token,
// with a wrong one, with another session's (or another browser's) token, or marked
// cross-site by the browser is refused with 403 and changes nothing — the sessions
// stay live and the people, keys, invitations and audit tables keep their rows.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layoutText } from '../../src/cabinet/views/cabinet-language.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { cabinetRoutes, concretePath, describeRoute, type CabinetRoute } from './cabinet-route-table.ts';

const WATCHED_TABLES = [
  'users',
  'memberships',
  'cabinet_sessions',
  'cabinet_invites',
  'cabinet_password_resets',
  'api_keys',
  'audit_events',
] as const;

/** Row counts of the watched tables, and how many sessions are live. */
async function snapshot(testApp: TestApp): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of WATCHED_TABLES) {
    const { rows } = await sql<{ count: string }>`select count(*) as count from ${sql.table(table)}`.execute(
      testApp.context.db,
    );
    counts[table] = Number(rows[0]?.count);
  }
  const { rows } = await sql<{
    count: string;
  }>`select count(*) as count from cabinet_sessions where ended_at is null`.execute(testApp.context.db);
  counts.live_sessions = Number(rows[0]?.count);
  return counts;
}

/** Turns the second factor on for a user, as enrolment leaves it (money routes ask for it; sign-in then asks for the code). */
async function enableSecondFactor(testApp: TestApp, userId: string): Promise<void> {
  await sql`update users set totp_enabled_at = ${testApp.clock.now()} where id = ${userId}`.execute(testApp.context.db);
}

interface Forgery {
  readonly name: string;
  readonly fields: Record<string, string>;
  readonly headers?: Record<string, string>;
}

function forgeries(own: string, other: string): Forgery[] {
  return [
    { name: 'without the token', fields: {} },
    { name: 'with a wrong token', fields: { csrf: 'A'.repeat(43) } },
    { name: "with another session's token", fields: { csrf: other } },
    { name: 'marked cross-site', fields: { csrf: own }, headers: { 'sec-fetch-site': 'cross-site' } },
  ];
}

describe.each(backends)('cabinet CSRF on %s', (backend) => {
  let testApp: TestApp;
  let owner: CabinetPerson;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    owner = await createOwner(testApp);
  });
  afterAll(() => testApp?.close());

  const postRoutes = (test: (route: CabinetRoute) => boolean) =>
    cabinetRoutes(testApp).filter((route) => route.method === 'POST' && test(route));

  async function expectRefusedAndUnchanged(
    client: CabinetClient,
    route: CabinetRoute,
    forgery: Forgery,
    stillLive: CabinetClient[],
  ): Promise<void> {
    const label = `${describeRoute(route)} ${forgery.name}`;
    const before = await snapshot(testApp);
    const response = await client.postRaw(concretePath(route, owner.shopId), forgery.fields, forgery.headers);
    expect(response.statusCode, label).toBe(403);
    expect(response.body, label).toContain(layoutText('ru', 'csrf_failed'));
    expect(await snapshot(testApp), label).toEqual(before);
    for (const each of stillLive) expect((await each.get('/cabinet/account')).statusCode, label).toBe(200);
  }

  it('every signed-in POST route refuses a forged form and changes nothing', { timeout: 600_000 }, async () => {
    const routes = postRoutes((route) => route.access !== 'public' && route.access !== 'second-factor');
    expect(routes.length).toBeGreaterThan(0);
    const laptop = new CabinetClient(testApp.app);
    const phone = new CabinetClient(testApp.app);
    await laptop.signIn(owner.email);
    await phone.signIn(owner.email);
    // Money routes need the owner's second factor; both sessions are already whole.
    await enableSecondFactor(testApp, owner.userId);
    await phone.get('/cabinet/account');
    const phoneToken = phone.csrf();
    for (const route of routes) {
      await laptop.get('/cabinet/account');
      for (const forgery of forgeries(laptop.csrf(), phoneToken))
        await expectRefusedAndUnchanged(laptop, route, forgery, [laptop, phone]);
    }
  });

  it('every public POST route refuses a forged form signed out, and a token of another browser', async () => {
    const routes = postRoutes((route) => route.access === 'public');
    expect(routes.length).toBeGreaterThan(0);
    const browser = new CabinetClient(testApp.app);
    const otherBrowser = new CabinetClient(testApp.app);
    for (const route of routes) {
      await otherBrowser.get('/cabinet/sign-in');
      await browser.get('/cabinet/sign-in');
      for (const forgery of forgeries(browser.csrf(), otherBrowser.csrf()))
        await expectRefusedAndUnchanged(browser, route, forgery, []);
    }
  });

  it('every public POST route refuses a forged form from a signed-in browser and keeps its session', async () => {
    const person = await createOwner(testApp);
    const browser = new CabinetClient(testApp.app);
    const otherBrowser = new CabinetClient(testApp.app);
    await browser.signIn(person.email);
    await otherBrowser.get('/cabinet/sign-in');
    for (const route of postRoutes((each) => each.access === 'public')) {
      await browser.get('/cabinet/account');
      for (const forgery of forgeries(browser.csrf(), otherBrowser.csrf()))
        await expectRefusedAndUnchanged(browser, route, forgery, [browser]);
    }
  });

  it('every second-factor POST route refuses a forged form from a session waiting for its code', async () => {
    const person = await createOwner(testApp);
    await enableSecondFactor(testApp, person.userId);
    const waiting = new CabinetClient(testApp.app);
    const other = new CabinetClient(testApp.app);
    const signedIn = await waiting.signIn(person.email);
    expect(String(signedIn.headers.location)).toMatch(/^\/cabinet\/sign-in\/two-factor/);
    await other.signIn(owner.email);
    await other.get('/cabinet/account');
    for (const route of postRoutes((each) => each.access === 'second-factor'))
      for (const forgery of forgeries('B'.repeat(43), other.csrf()))
        await expectRefusedAndUnchanged(waiting, route, forgery, []);
  });
});
