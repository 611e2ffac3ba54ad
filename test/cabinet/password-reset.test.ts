// Password reset through the real app and a real SMTP server on loopback: the link
// arrives by mail, works once, expires after an hour, ends every session; asking
// never says whether the email exists; without a mailer the page names the CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { cabinetLinkIn, startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { CabinetClient, createOwner, TEST_PASSWORD } from './cabinet-client.ts';

const NEW_PASSWORD = 'a brand new passphrase';

describe.each(backends)('cabinet password reset on %s', (backend) => {
  let smtp: SmtpReceiver;
  let testApp: TestApp;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    testApp = await createTestApp(backend, { config: { smtpUrl: smtp.url } });
  });
  afterAll(async () => {
    await testApp?.close();
    await smtp?.close();
  });

  async function askForLink(email: string): Promise<string> {
    const asker = new CabinetClient(testApp.app);
    await asker.get('/cabinet/password-reset');
    const asked = await asker.post('/cabinet/password-reset', { email });
    expect(asked.headers.location).toBe('/cabinet/password-reset?sent=1');
    const mail = await smtp.next();
    expect(mail.to).toEqual([email]);
    return cabinetLinkIn(mail);
  }

  it('the mailed link sets a new password once and ends every session of the user', async () => {
    const owner = await createOwner(testApp);
    const signedIn = new CabinetClient(testApp.app);
    await signedIn.signIn(owner.email);
    expect((await signedIn.get('/cabinet/account')).statusCode).toBe(200);
    const link = await askForLink(owner.email);
    expect(link).toMatch(/^http:\/\/paygate\.test\/cabinet\/password-reset\/[A-Za-z0-9_-]{43}$/);
    const path = new URL(link).pathname;
    const stored = await testApp.context.db
      .selectFrom('cabinet_password_resets')
      .select('token_hash')
      .where('user_id', '=', owner.userId)
      .execute();
    expect(stored).toHaveLength(1);
    expect(Buffer.from(stored[0]!.token_hash).toString('base64url')).not.toBe(path.split('/').pop());

    const resetter = new CabinetClient(testApp.app);
    const form = await resetter.get(path);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(owner.email);
    const mismatch = await resetter.post(path, { password: NEW_PASSWORD, repeat: 'something else entirely' });
    expect(mismatch.statusCode).toBe(400);
    const tooShort = await resetter.post(path, { password: 'short', repeat: 'short' });
    expect(tooShort.statusCode).toBe(400);
    const done = await resetter.post(path, { password: NEW_PASSWORD, repeat: NEW_PASSWORD });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe('/cabinet/password-reset?done=1');

    expect((await signedIn.get('/cabinet/account')).statusCode).toBe(303);
    expect((await new CabinetClient(testApp.app).signIn(owner.email, TEST_PASSWORD)).statusCode).toBe(401);
    expect((await new CabinetClient(testApp.app).signIn(owner.email, NEW_PASSWORD)).statusCode).toBe(303);

    expect((await resetter.get(path)).statusCode).toBe(404);
    await resetter.get('/cabinet/password-reset');
    expect(
      (await resetter.post(path, { password: 'yet another passphrase', repeat: 'yet another passphrase' })).statusCode,
    ).toBe(404);
    const actions = await testApp.context.db
      .selectFrom('audit_events')
      .select('action')
      .where('target', '=', owner.userId)
      .execute();
    expect(actions.map((row) => row.action)).toEqual(
      expect.arrayContaining(['user.password_reset_requested', 'user.password_reset']),
    );
  });

  it('a link no longer works after one hour', async () => {
    const owner = await createOwner(testApp);
    const path = new URL(await askForLink(owner.email)).pathname;
    testApp.clock.advance(59 * 60_000);
    const client = new CabinetClient(testApp.app);
    expect((await client.get(path)).statusCode).toBe(200);
    testApp.clock.advance(2 * 60_000);
    expect((await client.get(path)).statusCode).toBe(404);
    await client.get('/cabinet/password-reset');
    expect((await client.post(path, { password: NEW_PASSWORD, repeat: NEW_PASSWORD })).statusCode).toBe(404);
  });

  it('an unknown email gets the same answer and no mail is sent', async () => {
    const before = smtp.messages.length;
    const client = new CabinetClient(testApp.app);
    await client.get('/cabinet/password-reset');
    const asked = await client.post('/cabinet/password-reset', { email: 'nobody-at-all@example.test' });
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe('/cabinet/password-reset?sent=1');
    expect(smtp.messages.length).toBe(before);
  });

  it('asking again within five minutes mails no second link; after them it does', async () => {
    const owner = await createOwner(testApp);
    const first = await askForLink(owner.email);
    const asker = new CabinetClient(testApp.app);
    await asker.get('/cabinet/password-reset');
    const again = await asker.post('/cabinet/password-reset', { email: owner.email });
    expect(again.headers.location).toBe('/cabinet/password-reset?sent=1');
    const links = await testApp.context.db
      .selectFrom('cabinet_password_resets')
      .select('token_hash')
      .where('user_id', '=', owner.userId)
      .execute();
    expect(links).toHaveLength(1);
    testApp.clock.advance(5 * 60_000);
    const second = await askForLink(owner.email);
    expect(second).not.toBe(first);
  });

  it('a made-up link is refused', async () => {
    const client = new CabinetClient(testApp.app);
    expect((await client.get(`/cabinet/password-reset/${'A'.repeat(43)}`)).statusCode).toBe(404);
    expect((await client.get('/cabinet/password-reset/not-a-token')).statusCode).toBe(404);
  });
});

describe.each(backends)('cabinet password reset without a mailer on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  it('the page tells the person to ask the operator for paygate user reset-password, with no form', async () => {
    const page = await new CabinetClient(testApp.app).get('/cabinet/password-reset');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('paygate user reset-password');
    expect(page.body).not.toContain('name="email"');
  });
});
