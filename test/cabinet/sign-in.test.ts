// Signing in to the cabinet through the real app: the password, the session
// cookie and its flags, a refused sign-in that says nothing of the email, the
// growing lock after repeated failures, signing out, and ending other sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, createOwner, TEST_PASSWORD } from './cabinet-client.ts';

describe.each(backends)('cabinet sign-in on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  it('an owner made by merchant create --password signs in and lands on the shops page', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    const before = await client.get('/cabinet/shops');
    expect(before.statusCode).toBe(303);
    expect(before.headers.location).toBe('/cabinet/sign-in?back=%2Fcabinet%2Fshops');
    const signedIn = await client.signIn(owner.email);
    expect(signedIn.statusCode, signedIn.body).toBe(303);
    const setCookie = String(signedIn.headers['set-cookie']);
    expect(setCookie).toMatch(/paygate_session=[A-Za-z0-9_-]{43}; Path=\/cabinet; HttpOnly; SameSite=Lax/);
    const shops = await client.get('/cabinet/shops');
    expect(shops.statusCode).toBe(200);
    expect(shops.body).toContain(owner.shopId);
    expect(shops.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(shops.headers['content-security-policy']).not.toContain('unsafe-inline');
  });

  it('a wrong password and an unknown email get the same answer, and nothing signs in', async () => {
    const owner = await createOwner(testApp);
    const wrong = await new CabinetClient(testApp.app).signIn(owner.email, 'not the password');
    const unknown = await new CabinetClient(testApp.app).signIn(`nobody-${owner.email}`, 'not the password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    const notice = (body: string) => /<div class="notice error"[^>]*>([^<]*)</.exec(body)?.[1]?.trim();
    expect(notice(wrong.body)).toBe(notice(unknown.body));
    expect(wrong.headers['set-cookie'] ?? '').not.toMatch(/paygate_session=/);
  });

  it('after five failures the account is locked for a growing time; the right password then waits too', async () => {
    const owner = await createOwner(testApp);
    for (let attempt = 1; attempt <= 6; attempt++) {
      const refused = await new CabinetClient(testApp.app).signIn(owner.email, `guess ${attempt}`);
      expect(refused.statusCode).toBe(401);
    }
    const locked = await new CabinetClient(testApp.app).signIn(owner.email, TEST_PASSWORD);
    expect(locked.statusCode).toBe(429);
    testApp.clock.advance(2_000);
    const afterWait = await new CabinetClient(testApp.app).signIn(owner.email, TEST_PASSWORD);
    expect(afterWait.statusCode).toBe(303);
  });

  it('a form posted without the page token, or marked cross-site, is refused and changes nothing', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    await client.get('/cabinet/account');
    const forged = await client.post('/cabinet/sign-out', { csrf: 'forged' });
    expect(forged.statusCode).toBe(403);
    await client.get('/cabinet/account');
    const crossSite = await client.post('/cabinet/sign-out', {}, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.statusCode).toBe(403);
    expect((await client.get('/cabinet/account')).statusCode).toBe(200);
  });

  it('sign out everywhere else ends the other sessions and keeps this one', async () => {
    const owner = await createOwner(testApp);
    const laptop = new CabinetClient(testApp.app);
    const phone = new CabinetClient(testApp.app);
    await laptop.signIn(owner.email);
    await phone.signIn(owner.email);
    await laptop.get('/cabinet/account');
    const ended = await laptop.post('/cabinet/account/sessions/end-others');
    expect(ended.headers.location).toBe('/cabinet/account?ended=all&count=1');
    expect((await laptop.get('/cabinet/account')).statusCode).toBe(200);
    expect((await phone.get('/cabinet/account')).statusCode).toBe(303);
  });

  it('an idle session ends after 30 minutes', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    testApp.clock.advance(31 * 60_000);
    expect((await client.get('/cabinet/account')).statusCode).toBe(303);
  });
});
