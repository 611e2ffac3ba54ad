// Holes an attacker's review found in the cabinet, each held shut: creating a shop
// (which mints a key) needs step-up; enrolling a second factor needs step-up, so a
// stolen cookie cannot bind its own authenticator; codes guessed between sign-ins
// keep counting; one-time tokens never reach the log; using one reset link uses up
// the others; an invitation dies with its inviter's right to grant it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorResetLink } from '../../src/cabinet/password-reset/password-reset-service.ts';
import { urlForLog } from '../../src/logger.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, TEST_PASSWORD, addMember, createOwner } from './cabinet-client.ts';
import { enrol, totpCode } from './two-factor-support.ts';

const STEP_UP_STALE_MS = 11 * 60_000;

describe.each(backends)('cabinet review regressions on %s', (backend) => {
  let testApp: TestApp;
  const now = () => testApp.clock.now();
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  it('creating a shop, which mints a live key, asks for the second factor again like key creation', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    testApp.clock.advance(STEP_UP_STALE_MS);
    await client.get('/cabinet/shops');
    const shop = await client.post('/cabinet/shops', { name: 'second', mode: 'live' });
    expect(shop.statusCode).toBe(303);
    expect(String(shop.headers.location)).toMatch(/^\/cabinet\/step-up\?back=/);
    expect(shop.body).not.toContain('sk_live_');
  });

  it('a session whose step-up is stale cannot enrol its own authenticator: the password is asked first', async () => {
    const owner = await createOwner(testApp);
    const thief = new CabinetClient(testApp.app);
    await thief.signIn(owner.email);
    testApp.clock.advance(STEP_UP_STALE_MS);
    const page = await thief.get('/cabinet/account/two-factor');
    expect(page.statusCode).toBe(303);
    expect(String(page.headers.location)).toMatch(/^\/cabinet\/step-up\?back=/);
    await thief.get('/cabinet/account');
    const enable = await thief.post('/cabinet/account/two-factor/enable', { code: '123456' });
    expect(enable.statusCode).toBe(303);
    expect(String(enable.headers.location)).toMatch(/^\/cabinet\/step-up/);
    const user = await testApp.context.db
      .selectFrom('users')
      .select('totp_enabled_at')
      .where('id', '=', owner.userId)
      .executeTakeFirstOrThrow();
    expect(user.totp_enabled_at).toBeNull();
  });

  it('enrolling ends every other session of the user', async () => {
    const owner = await createOwner(testApp);
    const other = new CabinetClient(testApp.app);
    await other.signIn(owner.email);
    const enroller = new CabinetClient(testApp.app);
    await enroller.signIn(owner.email);
    await enrol(enroller, now);
    expect((await other.get('/cabinet/account')).statusCode).toBe(303);
    expect((await enroller.get('/cabinet/account')).statusCode).toBe(200);
  });

  it('wrong codes keep counting across sign-ins with the right password, and lock the second step', async () => {
    const owner = await createOwner(testApp);
    const setup = new CabinetClient(testApp.app);
    await setup.signIn(owner.email);
    const { secret } = await enrol(setup, now);
    const good = totpCode(secret, now());
    const wrong = good === '000000' ? '111111' : '000000';
    const attacker = new CabinetClient(testApp.app);
    const statuses: number[] = [];
    for (let round = 0; round < 2; round++) {
      await attacker.signIn(owner.email);
      await attacker.get('/cabinet/sign-in/two-factor');
      for (let attempt = 0; attempt < 4; attempt++)
        statuses.push((await attacker.post('/cabinet/sign-in/two-factor', { code: wrong })).statusCode);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(6)).toEqual([429, 429]);
  });

  it('password-reset and invitation tokens never reach a log line', () => {
    const token = 'A'.repeat(43);
    expect(urlForLog(`/cabinet/password-reset/${token}`)).toBe('/cabinet/password-reset/[redacted]');
    expect(urlForLog(`/cabinet/invites/${token}?lang=en`)).toBe('/cabinet/invites/[redacted]?[redacted]');
    expect(urlForLog('/cabinet/shops/shop_1')).toBe('/cabinet/shops/shop_1');
  });

  it("using one reset link uses up the user's other links", async () => {
    const owner = await createOwner(testApp);
    const first = new URL(await operatorResetLink(testApp.context, owner.email)).pathname;
    const second = new URL(await operatorResetLink(testApp.context, owner.email)).pathname;
    const client = new CabinetClient(testApp.app);
    await client.get(second);
    const used = await client.post(second, { password: 'new password one!', repeat: 'new password one!' });
    expect(used.statusCode).toBe(303);
    expect((await client.get(first)).statusCode).toBe(404);
  });

  it('an owner invitation stops working once its inviter is removed', async () => {
    const owner = await createOwner(testApp);
    const second = await addMember(testApp, owner, 'owner');
    const inviter = new CabinetClient(testApp.app);
    await inviter.signIn(second.email);
    await inviter.get('/cabinet/team');
    const invited = await inviter.post('/cabinet/team/invites', {
      email: `pal-${second.userId}@example.test`,
      role: 'owner',
    });
    const link = /id="invite-link" class="secret">([^<]+)</.exec(invited.body)![1]!;
    const remover = new CabinetClient(testApp.app);
    await remover.signIn(owner.email);
    await remover.get('/cabinet/team');
    expect((await remover.post(`/cabinet/team/members/${second.userId}/remove`)).statusCode).toBe(303);
    const pal = new CabinetClient(testApp.app);
    const path = new URL(link).pathname;
    await pal.get(path);
    const accepted = await pal.post(path, { name: 'Pal', password: TEST_PASSWORD });
    expect(accepted.statusCode).not.toBe(303);
    const members = await testApp.context.db
      .selectFrom('memberships')
      .select('user_id')
      .where('merchant_id', '=', owner.merchantId)
      .execute();
    expect(members).toHaveLength(1);
  });
});
