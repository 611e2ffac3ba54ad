// The team page through the real app: invitations mailed over real SMTP on
// loopback or shown once, accepted by a new person or by an existing user signed
// in as the invited email, the 72-hour end, a link that works once, and the
// rules on roles — only owners touch owners, the last owner stays — with every
// change in the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/cabinet/users/user-service.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { freePort } from '../support/free-port.ts';
import { cabinetLinkIn, startSmtpReceiver, type SmtpReceiver } from '../support/smtp-receiver.ts';
import { uniqueName } from '../support/seeded-random.ts';
import { addMember, CabinetClient, createOwner, TEST_PASSWORD, type CabinetPerson } from './cabinet-client.ts';

const NEW_PASSWORD = 'a long new password';

function newEmail(): string {
  return `invitee-${uniqueName('person')}@example.test`;
}

/** A client not signed in, reading English pages. */
function anonymous(testApp: TestApp): CabinetClient {
  const client = new CabinetClient(testApp.app);
  client.cookies.set('paygate_lang', 'en');
  return client;
}

/** The text of a mail's body, its base64 or quoted-printable transfer encoding undone. */
function mailText(raw: string): string {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (/content-transfer-encoding:\s*base64/i.test(head)) return Buffer.from(body, 'base64').toString('utf8');
  return body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A client signed in as `email`, reading English pages. */
async function signedIn(testApp: TestApp, email: string): Promise<CabinetClient> {
  const client = new CabinetClient(testApp.app);
  client.cookies.set('paygate_lang', 'en');
  const response = await client.signIn(email);
  expect(response.statusCode, response.body).toBe(303);
  return client;
}

async function invite(client: CabinetClient, email: string, role: string) {
  await client.get('/cabinet/team');
  return client.post('/cabinet/team/invites', { email, role });
}

function shownLink(body: string): string {
  const match = /id="invite-link"[^>]*>([^<]+)</.exec(body);
  if (!match?.[1]) throw new Error(`no invitation link on the page:\n${body.slice(0, 3000)}`);
  return match[1].trim();
}

function pathOf(link: string): string {
  return new URL(link).pathname;
}

async function roleOf(testApp: TestApp, person: { userId: string; merchantId: string }) {
  const row = await testApp.context.db
    .selectFrom('memberships')
    .select('role')
    .where('user_id', '=', person.userId)
    .where('merchant_id', '=', person.merchantId)
    .executeTakeFirst();
  return row?.role;
}

async function auditActions(testApp: TestApp, merchantId: string) {
  return testApp.context.db
    .selectFrom('audit_events')
    .select(['action', 'target', 'details'])
    .where('merchant_id', '=', merchantId)
    .where('action', 'like', 'team.%')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

async function invitesOf(testApp: TestApp, merchantId: string) {
  return testApp.context.db.selectFrom('cabinet_invites').selectAll().where('merchant_id', '=', merchantId).execute();
}

describe.each(backends)('cabinet team on %s', (backend) => {
  let smtp: SmtpReceiver;
  let mailing: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    mailing = await createTestApp(backend, { config: { smtpUrl: smtp.url } });
    plain = await createTestApp(backend);
  });
  afterAll(async () => {
    await mailing?.close();
    await plain?.close();
    await smtp?.close();
  });

  it('an invitation mailed over SMTP in the inviter language is accepted by a new person, who is signed in and can sign in again', async () => {
    const owner = await createOwner(mailing);
    const client = await signedIn(mailing, owner.email);
    const email = newEmail();
    const invited = await invite(client, email, 'developer');
    expect(invited.statusCode, invited.body).toBe(303);
    expect(invited.headers.location).toBe(`/cabinet/team?done=invited&to=${encodeURIComponent(email)}`);
    const mail = await smtp.next();
    expect(mail.to).toEqual([email]);
    const raw = mail.raw.replace(/\r?\n[ \t]/g, ' ');
    expect(raw).toContain('Subject: Invitation to the Paygate cabinet: Cabinet shop');
    const link = cabinetLinkIn(mail);
    expect(link).toMatch(/^http:\/\/paygate\.test\/cabinet\/invites\/[A-Za-z0-9_-]{43}$/);
    // The link is not in the database: only its hash.
    const [stored] = await invitesOf(mailing, owner.merchantId);
    expect(stored?.email).toBe(email);
    expect(stored?.expires_at.getTime()).toBe(mailing.clock.now().getTime() + 72 * 3600_000);
    expect(JSON.stringify(stored)).not.toContain(link.split('/').pop());

    const invitee = anonymous(mailing);
    const page = await invitee.get(pathOf(link));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Cabinet shop');
    expect(page.body).toContain('Developer');
    const accepted = await invitee.post(pathOf(link), { name: 'Dana Developer', password: NEW_PASSWORD });
    expect(accepted.statusCode, accepted.body).toBe(303);
    expect(accepted.headers.location).toBe('/cabinet/team?done=joined');
    const team = await invitee.get(accepted.headers.location!);
    expect(team.statusCode).toBe(200);
    expect(/<div class="notice ok"[^>]*>([^<]*)</.exec(team.body)?.[1]?.trim(), team.body).toBe(
      'You have joined the team.',
    );
    expect(team.body).toContain('Dana Developer');

    const again = anonymous(mailing);
    expect((await again.signIn(email, NEW_PASSWORD)).statusCode).toBe(303);
    expect((await again.get('/cabinet/team')).statusCode).toBe(200);
    const actions = await auditActions(mailing, owner.merchantId);
    expect(actions.map((row) => row.action)).toEqual(['team.invited', 'team.invite_accepted']);
  });

  it('an invitation mailed in Russian has its subject and text in Russian', async () => {
    const owner = await createOwner(mailing);
    const client = await signedIn(mailing, owner.email);
    client.cookies.set('paygate_lang', 'ru');
    const email = newEmail();
    expect((await invite(client, email, 'viewer')).statusCode).toBe(303);
    const mail = await smtp.next();
    expect(mail.to).toEqual([email]);
    expect(mail.raw).toMatch(/Subject: =\?UTF-8\?/i);
    const body = mailText(mail.raw);
    expect(body).toContain('Вас пригласили в команду');
    expect(body).toContain('Наблюдатель');
    expect(body).toMatch(/http:\/\/paygate\.test\/cabinet\/invites\/[A-Za-z0-9_-]{43}/);
  });

  it('when the SMTP server cannot be reached the inviter sees an error and no invitation is kept', async () => {
    const broken = await createTestApp(backend, { config: { smtpUrl: `smtp://127.0.0.1:${await freePort()}` } });
    try {
      const owner = await createOwner(broken);
      const client = await signedIn(broken, owner.email);
      const refused = await invite(client, newEmail(), 'viewer');
      expect(refused.headers.location).toBe('/cabinet/team?refused=mail_failed');
      const page = await client.get(refused.headers.location!);
      expect(page.body).toContain('The mail could not be sent');
      expect(await invitesOf(broken, owner.merchantId)).toEqual([]);
      expect(await auditActions(broken, owner.merchantId)).toEqual([]);
    } finally {
      await broken.close();
    }
  });

  it('without a mailer the link is shown once to the inviter and never again', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    const email = newEmail();
    const shown = await invite(client, email, 'finance');
    expect(shown.statusCode, shown.body).toBe(200);
    const link = shownLink(shown.body);
    expect(link).toMatch(/^http:\/\/paygate\.test\/cabinet\/invites\/[A-Za-z0-9_-]{43}$/);
    expect(shown.body).toContain('data-copy="invite-link"');
    const later = await client.get('/cabinet/team');
    expect(later.body).toContain(email);
    expect(later.body).not.toContain(link);
    expect(later.body).not.toContain('/cabinet/invites/');
    const invitee = anonymous(plain);
    expect((await invitee.get(pathOf(link))).statusCode).toBe(200);
  });

  it('an invitation expires after 72 hours: its link is refused and nothing changes', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    const email = newEmail();
    const link = pathOf(shownLink((await invite(client, email, 'viewer')).body));
    plain.clock.advance(72 * 3600_000 - 1);
    const invitee = anonymous(plain);
    expect((await invitee.get(link)).statusCode).toBe(200);
    plain.clock.advance(1);
    const page = await invitee.get(link);
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('no longer works');
    await invitee.get('/cabinet/sign-in');
    const post = await invitee.post(link, { name: 'Late', password: NEW_PASSWORD });
    expect(post.statusCode).toBe(410);
    expect(await plain.context.db.selectFrom('users').select('id').where('email', '=', email).execute()).toEqual([]);
    const [row] = await invitesOf(plain, owner.merchantId);
    expect(row?.accepted_at).toBeNull();
  });

  it('a password shorter than 10 characters is refused on the invitation page, and the invitation still works', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    const link = pathOf(shownLink((await invite(client, newEmail(), 'viewer')).body));
    const invitee = anonymous(plain);
    await invitee.get(link);
    const short = await invitee.post(link, { name: 'Short Password', password: 'too short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('The password must be 10 to 200 characters long.');
    expect(short.body).toContain('value="Short Password"');
    expect((await invitee.post(link, { name: 'Short Password', password: NEW_PASSWORD })).statusCode).toBe(303);
  });

  it('an invitation link works once: used, or revoked, it is refused', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    const link = pathOf(shownLink((await invite(client, newEmail(), 'viewer')).body));
    const first = anonymous(plain);
    await first.get(link);
    expect((await first.post(link, { name: 'First', password: NEW_PASSWORD })).statusCode).toBe(303);
    const second = anonymous(plain);
    expect((await second.get(link)).statusCode).toBe(410);
    await second.get('/cabinet/sign-in');
    expect((await second.post(link, { name: 'Second', password: NEW_PASSWORD })).statusCode).toBe(410);

    const revokedEmail = newEmail();
    const revokedLink = pathOf(shownLink((await invite(client, revokedEmail, 'viewer')).body));
    const [pending] = (await invitesOf(plain, owner.merchantId)).filter((row) => row.email === revokedEmail);
    await client.get('/cabinet/team');
    const revoked = await client.post(`/cabinet/team/invites/${pending!.id}/revoke`);
    expect(revoked.headers.location).toBe('/cabinet/team?done=revoked');
    expect((await client.get('/cabinet/team')).body).not.toContain(revokedEmail);
    expect((await anonymous(plain).get(revokedLink)).statusCode).toBe(410);
    const actions = (await auditActions(plain, owner.merchantId)).map((row) => row.action);
    expect(actions).toEqual(['team.invited', 'team.invite_accepted', 'team.invited', 'team.invite_revoked']);
  });

  it('an existing user signs in first and then accepts; a user with another email is refused', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    const email = newEmail();
    const existing = await createUser(plain.context, { email, password: TEST_PASSWORD });
    const link = pathOf(shownLink((await invite(client, email, 'admin')).body));

    const anonymousClient = anonymous(plain);
    const page = await anonymousClient.get(link);
    expect(page.body).toContain(`/cabinet/sign-in?back=${encodeURIComponent(link)}`);
    await anonymousClient.get('/cabinet/sign-in');
    const posted = await anonymousClient.post(link, { name: 'Someone', password: NEW_PASSWORD });
    expect(posted.headers.location).toBe(`/cabinet/sign-in?back=${encodeURIComponent(link)}`);

    const stranger = await createUser(plain.context, { email: newEmail(), password: TEST_PASSWORD });
    const other = await signedIn(plain, stranger.email);
    expect((await other.get(link)).statusCode).toBe(403);
    await other.get('/cabinet/account');
    expect((await other.post(link)).statusCode).toBe(403);
    expect(await roleOf(plain, { userId: stranger.id, merchantId: owner.merchantId })).toBeUndefined();

    const invitee = await signedIn(plain, email);
    const acceptPage = await invitee.get(link);
    expect(acceptPage.statusCode).toBe(200);
    expect(acceptPage.body).toContain('Accept the invitation');
    const accepted = await invitee.post(link);
    expect(accepted.headers.location).toBe('/cabinet/team?done=joined');
    expect(await roleOf(plain, { userId: existing.id, merchantId: owner.merchantId })).toBe('admin');
    expect((await invitee.get('/cabinet/team')).body).toContain(owner.email);
  });

  it('an admin cannot invite an owner, nor change or remove an owner', async () => {
    const owner = await createOwner(plain);
    const admin = await addMember(plain, owner, 'admin');
    const client = await signedIn(plain, admin.email);
    const page = await client.get('/cabinet/team');
    expect(page.body).not.toContain('<option value="owner"');
    const invited = await invite(client, newEmail(), 'owner');
    expect(invited.headers.location).toBe('/cabinet/team?refused=owner_only');
    expect(await invitesOf(plain, owner.merchantId)).toEqual([]);
    await client.get('/cabinet/team');
    const demoted = await client.post(`/cabinet/team/members/${owner.userId}/role`, { role: 'viewer' });
    expect(demoted.headers.location).toBe('/cabinet/team?refused=owner_only');
    const removed = await client.post(`/cabinet/team/members/${owner.userId}/remove`);
    expect(removed.headers.location).toBe('/cabinet/team?refused=owner_only');
    const promoted = await client.post(`/cabinet/team/members/${admin.userId}/role`, { role: 'owner' });
    expect(promoted.headers.location).toBe('/cabinet/team?refused=owner_only');
    expect(await roleOf(plain, owner)).toBe('owner');
    expect(await roleOf(plain, admin)).toBe('admin');
    // An admin still manages the others.
    const developer = await addMember(plain, owner, 'developer');
    await client.get('/cabinet/team');
    const changed = await client.post(`/cabinet/team/members/${developer.userId}/role`, { role: 'finance' });
    expect(changed.headers.location).toBe('/cabinet/team?done=role_changed');
    expect(await roleOf(plain, developer)).toBe('finance');
    const [audit] = await auditActions(plain, owner.merchantId);
    expect(audit?.action).toBe('team.role_changed');
    expect(audit?.target).toBe(developer.userId);
    expect(typeof audit?.details === 'string' ? JSON.parse(audit.details) : audit?.details).toEqual({
      before: 'developer',
      after: 'finance',
    });
  });

  it('the last owner can be neither removed nor demoted', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    await client.get('/cabinet/team');
    const demoted = await client.post(`/cabinet/team/members/${owner.userId}/role`, { role: 'admin' });
    expect(demoted.headers.location).toBe('/cabinet/team?refused=last_owner');
    expect((await client.get(demoted.headers.location!)).body).toContain('This is the last owner');
    const removed = await client.post(`/cabinet/team/members/${owner.userId}/remove`);
    expect(removed.headers.location).toBe('/cabinet/team?refused=last_owner');
    expect(await roleOf(plain, owner)).toBe('owner');
  });

  it('one invitation sent twice at once (a double submit) keeps one invitation; the other is refused as already invited', async () => {
    const owner = await createOwner(plain);
    const client = await signedIn(plain, owner.email);
    const email = newEmail();
    const answers = await Promise.all([invite(client, email, 'viewer'), invite(client, email, 'viewer')]);
    const kept = await plain.context.db
      .selectFrom('cabinet_invites')
      .select('id')
      .where('merchant_id', '=', owner.merchantId)
      .where('email', '=', email)
      .execute();
    expect(kept).toHaveLength(1);
    const refused = answers.find((answer) => answer.statusCode !== 200);
    expect(answers.filter((answer) => answer.statusCode === 200)).toHaveLength(1);
    expect(refused?.headers.location).toBe('/cabinet/team?refused=already_invited');
  });

  it('two owners demoting each other at the same time leave one owner', async () => {
    const first = await createOwner(plain);
    const second = await addMember(plain, first, 'owner');
    const a = await signedIn(plain, first.email);
    const b = await signedIn(plain, second.email);
    await a.get('/cabinet/team');
    await b.get('/cabinet/team');
    const answers = await Promise.all([
      a.post(`/cabinet/team/members/${second.userId}/role`, { role: 'admin' }),
      b.post(`/cabinet/team/members/${first.userId}/role`, { role: 'admin' }),
    ]);
    const owners = await plain.context.db
      .selectFrom('memberships')
      .select('user_id')
      .where('merchant_id', '=', first.merchantId)
      .where('role', '=', 'owner')
      .execute();
    expect(owners).toHaveLength(1);
    const locations = answers.map((answer) => answer.headers.location).sort();
    expect(locations[0]).toBe('/cabinet/team?done=role_changed');
    expect(locations[1]).toMatch(/^\/cabinet\/team\?refused=(last_owner|not_manager|owner_only)$/);
  });

  it('a removed member loses access to the merchant at once, though their session stays', async () => {
    const owner = await createOwner(plain);
    const developer = await addMember(plain, owner, 'developer');
    const member = await signedIn(plain, developer.email);
    expect((await member.get('/cabinet/team')).statusCode).toBe(200);
    const client = await signedIn(plain, owner.email);
    await client.get('/cabinet/team');
    const removed = await client.post(`/cabinet/team/members/${developer.userId}/remove`);
    expect(removed.headers.location).toBe('/cabinet/team?done=removed');
    expect((await member.get('/cabinet/team')).statusCode).toBe(403);
    expect((await member.get('/cabinet/account')).statusCode).toBe(200);
    expect(await roleOf(plain, developer)).toBeUndefined();
    const [audit] = await auditActions(plain, owner.merchantId);
    expect(audit?.action).toBe('team.member_removed');
  });

  it('a viewer sees the team but cannot invite (403) nor change roles', async () => {
    const owner = await createOwner(plain);
    const viewer: CabinetPerson = await addMember(plain, owner, 'viewer');
    const client = await signedIn(plain, viewer.email);
    const page = await client.get('/cabinet/team');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(owner.email);
    expect(page.body).not.toContain('action="/cabinet/team/invites"');
    const invited = await client.post('/cabinet/team/invites', { email: newEmail(), role: 'viewer' });
    expect(invited.statusCode).toBe(403);
    await client.get('/cabinet/team');
    const promoted = await client.post(`/cabinet/team/members/${viewer.userId}/role`, { role: 'admin' });
    expect(promoted.statusCode).toBe(403);
    expect(await invitesOf(plain, owner.merchantId)).toEqual([]);
    expect(await roleOf(plain, viewer)).toBe('viewer');
  });
});
