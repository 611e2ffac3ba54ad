// TOTP two-factor sign-in through the real app: enrolment (secret sealed, first
// code confirms), the second sign-in step, replay refused, recovery codes once
// each, step-up redirect and return, brute force of codes locked, switching off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, createOwner } from './cabinet-client.ts';
import { enrol, recoveryCodesOnPage, secretOnPage, totpCode } from './two-factor-support.ts';

describe.each(backends)('cabinet two-factor sign-in on %s', (backend) => {
  let testApp: TestApp;
  const now = () => testApp.clock.now();
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  async function auditActions(userId: string): Promise<string[]> {
    const rows = await testApp.context.db
      .selectFrom('audit_events')
      .select('action')
      .where('target', '=', userId)
      .orderBy('created_at')
      .execute();
    return rows.map((row) => row.action);
  }

  async function enrolledOwner() {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    const enrolled = await enrol(client, now);
    await client.get('/cabinet/account');
    await client.post('/cabinet/sign-out');
    return { owner, ...enrolled };
  }

  it('enrols with the secret shown on the page; the secret is sealed at rest; ten recovery codes are shown', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    const page = await client.get('/cabinet/account/two-factor');
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<img class="totp-qr" src="data:image\/svg\+xml;base64,/);
    const secret = secretOnPage(page.body);
    // Reloading keeps the same secret (a scanned QR code stays valid).
    expect(secretOnPage((await client.get('/cabinet/account/two-factor')).body)).toBe(secret);
    const wrong = await client.post('/cabinet/account/two-factor/enable', {
      code: '000000' === totpCode(secret, now()) ? '111111' : '000000',
    });
    expect(wrong.statusCode).toBe(400);
    const enabled = await client.post('/cabinet/account/two-factor/enable', { code: totpCode(secret, now()) });
    expect(enabled.statusCode).toBe(200);
    const codes = recoveryCodesOnPage(enabled.body);
    expect(new Set(codes).size).toBe(10);
    const user = await testApp.context.db
      .selectFrom('users')
      .select(['totp_secret_sealed', 'totp_enabled_at'])
      .where('id', '=', owner.userId)
      .executeTakeFirstOrThrow();
    expect(user.totp_enabled_at).not.toBeNull();
    expect(user.totp_secret_sealed).toMatch(/^v1\./);
    expect(user.totp_secret_sealed).not.toContain(secret);
    const stored = await testApp.context.db
      .selectFrom('user_recovery_codes')
      .select('code_hash')
      .where('user_id', '=', owner.userId)
      .execute();
    expect(stored).toHaveLength(10);
    expect(await auditActions(owner.userId)).toContain('user.two_factor_enabled');
  });

  it('after sign-out, the password alone leaves the session pending; a wrong code is refused, the right one signs in', async () => {
    const { owner, secret } = await enrolledOwner();
    testApp.clock.advance(60_000);
    const client = new CabinetClient(testApp.app);
    const signedIn = await client.signIn(owner.email);
    expect(signedIn.headers.location).toBe('/cabinet/sign-in/two-factor?back=%2Fcabinet');
    const pendingCookie = [...client.cookies.values()].join();
    const blocked = await client.get('/cabinet/shops');
    expect(blocked.headers.location).toBe('/cabinet/sign-in/two-factor');
    await client.get('/cabinet/sign-in/two-factor?back=%2Fcabinet%2Fshops');
    const right = totpCode(secret, now());
    const wrong = await client.post('/cabinet/sign-in/two-factor', {
      code: right === '123456' ? '654321' : '123456',
      back: '/cabinet/shops',
    });
    expect(wrong.statusCode).toBe(401);
    const accepted = await client.post('/cabinet/sign-in/two-factor', { code: right, back: '/cabinet/shops' });
    expect(accepted.statusCode).toBe(303);
    expect(accepted.headers.location).toBe('/cabinet/shops');
    // A new session token after the second factor: the one seen between the steps is worth nothing.
    expect([...client.cookies.values()].join()).not.toBe(pendingCookie);
    expect((await client.get('/cabinet/shops')).statusCode).toBe(200);
    const actions = await auditActions(owner.userId);
    expect(actions).toContain('user.second_factor_failed');
    expect(actions).toContain('user.signed_in_second_factor');
  });

  it('a TOTP code is not accepted twice, even in a new sign-in within its window', async () => {
    const { owner, secret } = await enrolledOwner();
    testApp.clock.advance(60_000);
    const code = totpCode(secret, now());
    const first = new CabinetClient(testApp.app);
    await first.signIn(owner.email);
    await first.get('/cabinet/sign-in/two-factor');
    expect((await first.post('/cabinet/sign-in/two-factor', { code })).statusCode).toBe(303);
    const second = new CabinetClient(testApp.app);
    await second.signIn(owner.email);
    await second.get('/cabinet/sign-in/two-factor');
    expect((await second.post('/cabinet/sign-in/two-factor', { code })).statusCode).toBe(401);
    // The next step's code still works.
    testApp.clock.advance(30_000);
    expect((await second.post('/cabinet/sign-in/two-factor', { code: totpCode(secret, now()) })).statusCode).toBe(303);
  });

  it('a recovery code stands in for the TOTP code once', async () => {
    const { owner, codes } = await enrolledOwner();
    const first = new CabinetClient(testApp.app);
    await first.signIn(owner.email);
    await first.get('/cabinet/sign-in/two-factor');
    expect((await first.post('/cabinet/sign-in/two-factor', { code: codes[3]!.toUpperCase() })).statusCode).toBe(303);
    const second = new CabinetClient(testApp.app);
    await second.signIn(owner.email);
    await second.get('/cabinet/sign-in/two-factor');
    expect((await second.post('/cabinet/sign-in/two-factor', { code: codes[3]! })).statusCode).toBe(401);
    expect((await second.post('/cabinet/sign-in/two-factor', { code: codes[4]! })).statusCode).toBe(303);
    expect((await second.get('/cabinet/account/two-factor')).body).toMatch(/<dd>8<\/dd>/);
  });

  it('guessing codes locks the account: after five wrong codes even the right one waits', async () => {
    const { owner, secret } = await enrolledOwner();
    testApp.clock.advance(60_000);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    await client.get('/cabinet/sign-in/two-factor');
    const right = totpCode(secret, now());
    const guesses = ['000001', '000002', '000003', '000004', '000005', '000006'].filter((guess) => guess !== right);
    for (const guess of guesses.slice(0, 6))
      expect((await client.post('/cabinet/sign-in/two-factor', { code: guess })).statusCode).toBe(401);
    const locked = await client.post('/cabinet/sign-in/two-factor', { code: right });
    expect(locked.statusCode).toBe(429);
    testApp.clock.advance(2_000);
    expect((await client.post('/cabinet/sign-in/two-factor', { code: totpCode(secret, now()) })).statusCode).toBe(303);
  });

  it('an action needing step-up sends to /cabinet/step-up after the window and comes back once the code is given', async () => {
    const { owner, secret } = await enrolledOwner();
    testApp.clock.advance(60_000);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    await client.get('/cabinet/sign-in/two-factor');
    await client.post('/cabinet/sign-in/two-factor', { code: totpCode(secret, now()) });
    testApp.clock.advance(11 * 60_000);
    await client.get('/cabinet/account/two-factor');
    const asked = await client.post('/cabinet/account/two-factor/recovery-codes');
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe('/cabinet/step-up?back=%2Fcabinet%2Faccount%2Ftwo-factor');
    await client.get(asked.headers.location as string);
    const back = await client.post('/cabinet/step-up', {
      code: totpCode(secret, now()),
      back: '/cabinet/account/two-factor',
    });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe('/cabinet/account/two-factor');
    await client.get('/cabinet/account/two-factor');
    const regenerated = await client.post('/cabinet/account/two-factor/recovery-codes');
    expect(regenerated.statusCode).toBe(200);
    expect(recoveryCodesOnPage(regenerated.body)).toHaveLength(10);
    expect(await auditActions(owner.userId)).toContain('user.recovery_codes_regenerated');
  });

  it('step-up asks a user without a second factor for the password, and refuses a wrong one', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    const page = await client.get('/cabinet/step-up?back=%2Fcabinet%2Faccount');
    expect(page.body).toContain('type="password"');
    expect(
      (await client.post('/cabinet/step-up', { password: 'not the password', back: '/cabinet/account' })).statusCode,
    ).toBe(401);
    const ok = await client.post('/cabinet/step-up', { password: 'correct horse battery', back: 'https://evil.test/' });
    expect(ok.headers.location).toBe('/cabinet');
  });

  it('switching off (after step-up) forgets the secret: the next sign-in needs only the password', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    await enrol(client, now);
    await client.get('/cabinet/account/two-factor');
    const off = await client.post('/cabinet/account/two-factor/disable');
    expect(off.headers.location).toBe('/cabinet/account');
    expect(await auditActions(owner.userId)).toContain('user.two_factor_disabled');
    const again = await new CabinetClient(testApp.app).signIn(owner.email);
    expect(again.headers.location).toBe('/cabinet');
  });
});
