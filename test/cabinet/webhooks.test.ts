// The cabinet's webhook pages through the real app, with the real delivery
// workers and a real receiver on 127.0.0.1: the endpoint (the API's address
// guard), the test send, the delivery log and an event's attempts, resending one
// event and every failed one since a time, the signing secret behind step-up
// (reveal, rotate: the next delivery verifies with the new secret), who may do
// what, and the audit row each change writes (from the cabinet and from the API).
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/context.ts';
import { createWorkers } from '../../src/modules.ts';
import type { Role } from '../../src/cabinet/roles.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';

interface SignedIn {
  readonly client: CabinetClient;
  readonly person: CabinetPerson;
  /** /cabinet/shops/:shopId/webhooks of the person's shop. */
  readonly base: string;
}

async function signIn(testApp: TestApp, role: Role = 'owner'): Promise<SignedIn> {
  const owner = await createOwner(testApp);
  const person = role === 'owner' ? owner : await addMember(testApp, owner, role);
  const client = new CabinetClient(testApp.app);
  const signedIn = await client.signIn(person.email);
  expect(signedIn.statusCode, signedIn.body).toBe(303);
  return { client, person, base: `/cabinet/shops/${owner.shopId}/webhooks` };
}

/** Opens `page` for its form token, then posts the form. */
async function submit(who: SignedIn, page: string, action: string, fields: Record<string, string> = {}) {
  await who.client.get(page);
  return who.client.post(action, fields);
}

function auditRows(testApp: TestApp, shopId: string) {
  return testApp.context.db
    .selectFrom('audit_events')
    .selectAll()
    .where('shop_id', '=', shopId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

function shownSecret(body: string): string {
  const secret = /id="webhook-secret">([^<]+)</.exec(body)?.[1];
  if (!secret) throw new Error(`no secret on the page:\n${body.slice(0, 2000)}`);
  return secret;
}

function eventIdOf(location: unknown): string {
  const id = /\/events\/(evt_[A-Za-z0-9_]+)/.exec(String(location))?.[1];
  if (!id) throw new Error(`no event in ${String(location)}`);
  return id;
}

describe.each(backends)('cabinet webhooks on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;
  let workers: Worker[];

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    testApp.clock.set(new Date()); // signatures are checked against real time
    receiver = await startReceiver();
    workers = createWorkers(testApp.modules);
    for (const worker of workers) worker.start();
  });
  afterEach(() => {
    receiver.handler = () => ({ status: 200, body: 'ok' });
  });
  afterAll(async () => {
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await receiver?.close();
    await testApp?.close();
  });

  const requestsFor = (eventId: string) => receiver.requests.filter((request) => request.body.includes(eventId));

  async function withEndpoint(who: SignedIn): Promise<void> {
    const saved = await submit(who, who.base, `${who.base}/endpoint`, { url: receiver.url });
    expect(saved.statusCode, saved.body).toBe(303);
  }

  async function sendTest(who: SignedIn): Promise<string> {
    const sent = await submit(who, who.base, `${who.base}/test`);
    expect(sent.statusCode, sent.body).toBe(303);
    return eventIdOf(sent.headers.location);
  }

  async function statusOf(who: SignedIn, eventId: string): Promise<string | undefined> {
    const page = await who.client.get(`${who.base}/events/${eventId}`);
    return /data-status="([a-z_]+)"/.exec(page.body)?.[1];
  }

  it('an owner sets the endpoint: the page shows it as text, never as a link, and the change is audited with before and after', async () => {
    const owner = await signIn(testApp);
    const saved = await submit(owner, owner.base, `${owner.base}/endpoint`, { url: 'https://shop.example/hooks?a=1' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe(`${owner.base}?endpoint=saved`);
    const page = await owner.client.get(String(saved.headers.location));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<code id="webhook-url">https://shop.example/hooks?a=1</code>');
    expect(page.body).not.toContain('href="https://shop.example');
    const cleared = await submit(owner, owner.base, `${owner.base}/endpoint`, { url: '' });
    expect(cleared.headers.location).toBe(`${owner.base}?endpoint=cleared`);
    const rows = await auditRows(testApp, owner.person.shopId);
    const changes = rows.filter((row) => row.action === 'webhook.endpoint_changed');
    expect(changes.map((row) => row.details)).toEqual([
      { before: null, after: 'https://shop.example/hooks?a=1' },
      { before: 'https://shop.example/hooks?a=1', after: null },
    ]);
    expect(changes[0]).toMatchObject({ actor_kind: 'user', actor_id: owner.person.userId });
  });

  it('a test event reaches the real receiver signed with the revealed secret, and its page shows the attempt', async () => {
    const owner = await signIn(testApp);
    await withEndpoint(owner);
    receiver.handler = () => ({ status: 200, body: '<b>thanks</b>' + 'x'.repeat(800) });
    const eventId = await sendTest(owner);
    const [delivered] = requestsFor(eventId);
    expect(delivered).toBeDefined();
    const revealed = await submit(owner, `${owner.base}/secret`, `${owner.base}/secret/reveal`);
    expect(revealed.statusCode).toBe(200);
    const secret = shownSecret(revealed.body);
    const event = new Webhook(secret).verify(delivered!.body, delivered!.headers as Record<string, string>) as {
      type: string;
    };
    expect(event.type).toBe('webhook.test');
    const page = await owner.client.get(`${owner.base}/events/${eventId}?test=succeeded`);
    expect(page.body).toContain('data-status="delivered"');
    const row = /<tr data-attempt="1">([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? '';
    expect(row).toContain('<td>200</td>');
    // The receiver's answer is shown as text, cut to 500 characters.
    expect(row).toContain(`&lt;b>thanks&lt;/b>${'x'.repeat(500 - '<b>thanks</b>'.length)}</code>`);
    const log = await owner.client.get(owner.base);
    expect(log.body).toMatch(new RegExp(`data-event="${eventId}">[\\s\\S]*?webhook.test[\\s\\S]*?<td>1</td>`));
    const actions = (await auditRows(testApp, owner.person.shopId)).map((row) => row.action);
    expect(actions).toEqual(['webhook.endpoint_changed', 'webhook.test_sent', 'webhook.secret_revealed']);
  });

  it('a failed event resent from its page is delivered by the workers, with its second attempt in the log', async () => {
    const developer = await signIn(testApp, 'developer');
    await withEndpoint(developer);
    receiver.handler = () => ({ status: 500, body: 'down' });
    const eventId = await sendTest(developer);
    expect(await statusOf(developer, eventId)).toBe('failed');
    const failedLog = await developer.client.get(`${developer.base}?status=failed`);
    expect(failedLog.body).toContain(`data-event="${eventId}"`);
    expect((await developer.client.get(`${developer.base}?status=delivered`)).body).not.toContain(eventId);
    receiver.handler = () => ({ status: 200, body: 'ok' });
    const resent = await submit(
      developer,
      `${developer.base}/events/${eventId}`,
      `${developer.base}/events/${eventId}/resend`,
    );
    expect(resent.headers.location).toBe(`${developer.base}/events/${eventId}?resent=1`);
    await eventually(
      () => statusOf(developer, eventId),
      (status) => status === 'delivered',
    );
    const page = await developer.client.get(`${developer.base}/events/${eventId}`);
    expect(page.body).toMatch(/<tr data-attempt="2">[\s\S]*?<td>200<\/td>/);
    expect(page.body).toMatch(/<tr data-attempt="1">[\s\S]*?<td>500<\/td>/);
    const resentRow = (await auditRows(testApp, developer.person.shopId)).find(
      (row) => row.action === 'webhook.resent',
    );
    expect(resentRow).toMatchObject({ target: eventId, actor_id: developer.person.userId });
  });

  it('"resend all failed since" queues every failed event since that time, says how many, and the workers deliver them', async () => {
    const owner = await signIn(testApp);
    await withEndpoint(owner);
    receiver.handler = () => ({ status: 503, body: 'busy' });
    const failed = [await sendTest(owner), await sendTest(owner), await sendTest(owner)];
    receiver.handler = () => ({ status: 200, body: 'ok' });
    const delivered = await sendTest(owner);
    const since = new Date(testApp.clock.now().getTime() - 60_000).toISOString().slice(0, 16);
    const later = new Date(testApp.clock.now().getTime() + 60_000).toISOString().slice(0, 16);
    const none = await submit(owner, owner.base, `${owner.base}/resend-failed`, { since: later });
    expect(none.headers.location).toBe(`${owner.base}?resent_failed=0`);
    const resent = await submit(owner, owner.base, `${owner.base}/resend-failed`, { since });
    expect(resent.headers.location).toBe(`${owner.base}?resent_failed=3`);
    const page = await owner.client.get(String(resent.headers.location));
    expect(page.body).toContain('3');
    for (const eventId of failed)
      await eventually(
        () => statusOf(owner, eventId),
        (status) => status === 'delivered',
      );
    expect(requestsFor(delivered)).toHaveLength(1);
    const audited = (await auditRows(testApp, owner.person.shopId)).filter(
      (row) => row.action === 'webhook.resent_failed',
    );
    expect(audited.map((row) => (row.details as { count: number }).count)).toEqual([0, 3]);
    const bad = await submit(owner, owner.base, `${owner.base}/resend-failed`, { since: 'yesterday' });
    expect(bad.statusCode).toBe(400);
  });

  it('after a rotation the page shows the new secret once, and the next delivery verifies with it', async () => {
    const owner = await signIn(testApp);
    await withEndpoint(owner);
    const before = shownSecret((await submit(owner, `${owner.base}/secret`, `${owner.base}/secret/reveal`)).body);
    const rotated = await submit(owner, `${owner.base}/secret`, `${owner.base}/secret/rotate`);
    expect(rotated.statusCode).toBe(200);
    const secret = shownSecret(rotated.body);
    expect(secret).not.toBe(before);
    expect(secret).toMatch(/^whsec_/);
    const eventId = await sendTest(owner);
    const [delivered] = requestsFor(eventId);
    const headers = delivered!.headers as Record<string, string>;
    expect((new Webhook(secret).verify(delivered!.body, headers) as { type: string }).type).toBe('webhook.test');
    // The previous secret keeps working for its overlap.
    expect(() => new Webhook(before).verify(delivered!.body, headers)).not.toThrow();
    const page = await owner.client.get(owner.base);
    expect(page.body).not.toContain(secret);
    const rotation = (await auditRows(testApp, owner.person.shopId)).find(
      (row) => row.action === 'webhook.secret_rotated',
    );
    expect(JSON.stringify(rotation)).not.toContain(secret);
  });

  it('revealing or rotating the secret on a session not stepped up lately goes to /cabinet/step-up and reveals nothing', async () => {
    const owner = await signIn(testApp);
    await owner.client.get(owner.base);
    const csrf = owner.client.csrf();
    await testApp.context.db
      .updateTable('cabinet_sessions')
      .set({ stepped_up_at: new Date(testApp.clock.now().getTime() - 60 * 60_000) })
      .where('user_id', '=', owner.person.userId)
      .execute();
    const page = await owner.client.get(`${owner.base}/secret`);
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(`/cabinet/step-up?back=${encodeURIComponent(`${owner.base}/secret`)}`);
    const reveal = await owner.client.post(`${owner.base}/secret/reveal`, { csrf });
    expect(reveal.statusCode).toBe(303);
    expect(String(reveal.headers.location)).toMatch(/^\/cabinet\/step-up\?back=/);
    const rotate = await owner.client.post(`${owner.base}/secret/rotate`, { csrf });
    expect(rotate.statusCode).toBe(303);
    const actions = (await auditRows(testApp, owner.person.shopId)).map((row) => row.action);
    expect(actions).not.toContain('webhook.secret_revealed');
    expect(actions).not.toContain('webhook.secret_rotated');
  });

  it('a viewer sees the endpoint and the log but may not change, test, resend or open the secret (403)', async () => {
    const owner = await signIn(testApp);
    await withEndpoint(owner);
    const eventId = await sendTest(owner);
    const member = await addMember(testApp, owner.person, 'viewer');
    const client = new CabinetClient(testApp.app);
    await client.signIn(member.email);
    const who: SignedIn = { client, person: member, base: owner.base };
    const page = await client.get(owner.base);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-event="${eventId}"`);
    expect(page.body).toContain(receiver.url);
    expect(page.body).not.toContain(`action="${owner.base}/endpoint"`);
    expect(page.body).not.toContain(`href="${owner.base}/secret"`);
    expect((await client.get(`${owner.base}/events/${eventId}`)).statusCode).toBe(200);
    expect((await submit(who, owner.base, `${owner.base}/endpoint`, { url: '' })).statusCode).toBe(403);
    expect((await submit(who, owner.base, `${owner.base}/test`)).statusCode).toBe(403);
    expect((await submit(who, owner.base, `${owner.base}/events/${eventId}/resend`)).statusCode).toBe(403);
    expect(
      (await submit(who, owner.base, `${owner.base}/resend-failed`, { since: '2026-01-01T00:00' })).statusCode,
    ).toBe(403);
    expect((await client.get(`${owner.base}/secret`)).statusCode).toBe(403);
    expect((await submit(who, owner.base, `${owner.base}/secret/reveal`)).statusCode).toBe(403);
    // Another merchant's people do not see this shop at all.
    const outsider = await signIn(testApp, 'viewer');
    expect((await outsider.client.get(owner.base)).statusCode).toBe(404);
    const endpoint = await testApp.app.inject({
      method: 'GET',
      url: '/v1/webhooks/endpoint',
      headers: { authorization: `Bearer ${owner.person.apiKey}` },
    });
    expect(endpoint.json()).toEqual({ url: receiver.url });
  });

  it('the API records the same audit actions with the key as actor', async () => {
    const owner = await createOwner(testApp);
    const call = (method: 'PUT' | 'POST', url: string, payload?: unknown) =>
      testApp.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${owner.apiKey}` },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
    expect((await call('PUT', '/v1/webhooks/endpoint', { url: receiver.url })).statusCode).toBe(200);
    const tested = await call('POST', '/v1/webhooks/test');
    expect(tested.statusCode).toBe(200);
    expect((await call('POST', `/v1/webhooks/events/${tested.json().event.id}/resend`)).statusCode).toBe(202);
    expect((await call('POST', '/v1/webhooks/secret/rotate')).statusCode).toBe(200);
    const rows = await auditRows(testApp, owner.shopId);
    expect(rows.map((row) => row.action)).toEqual([
      'webhook.endpoint_changed',
      'webhook.test_sent',
      'webhook.resent',
      'webhook.secret_rotated',
    ]);
    const keyIds = new Set(rows.map((row) => row.actor_id));
    expect(keyIds.size).toBe(1);
    expect(rows.every((row) => row.actor_kind === 'api_key' && row.merchant_id === owner.merchantId)).toBe(true);
    expect([...keyIds][0]).toMatch(/\S/);
  });
});

describe.each(backends)('cabinet webhook endpoint with private addresses refused, on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend, { config: { webhookAllowPrivate: false } });
  });
  afterAll(() => testApp?.close());

  it.each([
    ['https://10.0.0.5/hooks', 'url must not point to 10.0.0.5 (private address)'],
    ['https://localhost/hooks', 'url must not point to localhost (loopback address)'],
    ['ftp://shop.example/hooks', 'url must use https or http'],
  ])('%s is refused with the API message and the endpoint is kept', async (url, message) => {
    const owner = await signIn(testApp);
    await submit(owner, owner.base, `${owner.base}/endpoint`, { url: 'https://shop.example/hooks' });
    const refused = await submit(owner, owner.base, `${owner.base}/endpoint`, { url });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(message);
    const page = await owner.client.get(owner.base);
    expect(page.body).toContain('<code id="webhook-url">https://shop.example/hooks</code>');
    const changes = (await auditRows(testApp, owner.person.shopId)).filter(
      (row) => row.action === 'webhook.endpoint_changed',
    );
    expect(changes).toHaveLength(1);
  });
});
