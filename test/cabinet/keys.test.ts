// A shop's API keys and the shops themselves through the real cabinet app: a key's
// secret shown once, working on the API, refused at once when revoked; its last
// use recorded at most once a minute; who may manage keys; step-up; shop create
// and rename, each action with its audit row; another merchant's shop not found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';

describe.each(backends)('cabinet keys and shops on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  async function signedIn(person: CabinetPerson): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    const response = await client.signIn(person.email);
    expect(response.statusCode, response.body).toBe(303);
    return client;
  }

  function account(apiKey: string) {
    return testApp.app.inject({ method: 'GET', url: '/v1/account', headers: { authorization: `Bearer ${apiKey}` } });
  }

  function auditOf(merchantId: string) {
    return testApp.context.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind', 'actor_label', 'shop_id', 'target', 'details'])
      .where('merchant_id', '=', merchantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  function keyRow(keyId: string) {
    return testApp.context.db
      .selectFrom('api_keys')
      .select(['name', 'last_used_at', 'revoked_at'])
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
  }

  async function createKey(client: CabinetClient, shopId: string, name: string, scopes: string[]) {
    await client.get(`/cabinet/shops/${shopId}/keys`);
    const body = new URLSearchParams({ csrf: client.csrf(), name });
    for (const scope of scopes) body.append('scopes', scope);
    return testApp.app.inject({
      method: 'POST',
      url: `/cabinet/shops/${shopId}/keys`,
      payload: body.toString(),
      headers: {
        cookie: [...client.cookies].map(([cookieName, value]) => `${cookieName}=${value}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
  }

  const secretIn = (body: string) => /sk_test_[A-Za-z0-9_-]{43}/.exec(body)?.[0];

  it('a new key is shown once, works on the API, and after revocation gets 401 at once', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    const created = await createKey(client, owner.shopId, 'Checkout server', ['payments', 'read']);
    expect(created.statusCode, created.body).toBe(200);
    expect(created.body).toContain('data-copy="new-api-key"');
    const secret = secretIn(created.body);
    expect(secret).toBeDefined();
    const works = await account(secret!);
    expect(works.statusCode).toBe(200);
    expect(works.json()).toMatchObject({ shop_id: owner.shopId, scopes: ['payments', 'read'] });
    const keyId = works.json().key_id as string;

    const list = await client.get(`/cabinet/shops/${owner.shopId}/keys`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('Checkout server');
    expect(list.body).toContain(secret!.slice(0, 12));
    expect(list.body).not.toContain(secret!);

    const revoked = await client.post(`/cabinet/shops/${owner.shopId}/keys/${keyId}/revoke`);
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`/cabinet/shops/${owner.shopId}/keys?revoked=1`);
    expect((await account(secret!)).statusCode).toBe(401);
    expect((await keyRow(keyId)).revoked_at).not.toBeNull();

    const audit = (await auditOf(owner.merchantId)).filter((row) => row.action.startsWith('api_key.'));
    expect(audit.map((row) => [row.action, row.target, row.actor_kind, row.actor_label])).toEqual([
      ['api_key.created', keyId, 'user', owner.email],
      ['api_key.revoked', keyId, 'user', owner.email],
    ]);
    expect(audit[0]!.details).toEqual({ name: 'Checkout server', scopes: ['payments', 'read'] });
    expect(JSON.stringify(audit)).not.toContain(secret!);
  });

  it('a key with no scope ticked is refused and nothing is made', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    const refused = await createKey(client, owner.shopId, 'No scopes', []);
    expect(refused.statusCode).toBe(400);
    expect(secretIn(refused.body)).toBeUndefined();
    const list = await client.get(`/cabinet/shops/${owner.shopId}/keys`);
    expect(list.body).not.toContain('No scopes');
  });

  it('last use is recorded on the clock, at most once a minute per key', async () => {
    const owner = await createOwner(testApp);
    const keyId = (await account(owner.apiKey)).json().key_id as string;
    const first = (await keyRow(keyId)).last_used_at;
    expect(first?.getTime()).toBe(testApp.clock.now().getTime());
    testApp.clock.advance(30_000);
    expect((await account(owner.apiKey)).statusCode).toBe(200);
    expect((await keyRow(keyId)).last_used_at?.getTime()).toBe(first!.getTime());
    testApp.clock.advance(31_000);
    expect((await account(owner.apiKey)).statusCode).toBe(200);
    expect((await keyRow(keyId)).last_used_at?.getTime()).toBe(testApp.clock.now().getTime());
    const client = await signedIn(owner);
    const list = await client.get(`/cabinet/shops/${owner.shopId}/keys`);
    expect(list.body).toContain(`${testApp.clock.now().toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  });

  it('a developer manages keys; viewer and finance are refused the keys page and its actions', async () => {
    const owner = await createOwner(testApp);
    const developer = await signedIn(await addMember(testApp, owner, 'developer'));
    const made = await createKey(developer, owner.shopId, 'Developer key', ['read']);
    expect(made.statusCode).toBe(200);
    const keyId = (await account(secretIn(made.body)!)).json().key_id as string;
    for (const role of ['viewer', 'finance'] as const) {
      const member = await signedIn(await addMember(testApp, owner, role));
      expect((await member.get(`/cabinet/shops/${owner.shopId}/keys`)).statusCode).toBe(403);
      await member.get('/cabinet/account');
      expect((await member.post(`/cabinet/shops/${owner.shopId}/keys`, { name: 'x', scopes: 'read' })).statusCode).toBe(
        403,
      );
      await member.get('/cabinet/account');
      expect((await member.post(`/cabinet/shops/${owner.shopId}/keys/${keyId}/revoke`)).statusCode).toBe(403);
    }
    expect((await keyRow(keyId)).revoked_at).toBeNull();
    const overview = await developer.get(`/cabinet/shops/${owner.shopId}`);
    expect(overview.body).toContain(`/cabinet/shops/${owner.shopId}/keys`);
  });

  it('creating or revoking a key in a session older than the step-up window is sent to step-up', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    const keyId = (await account(owner.apiKey)).json().key_id as string;
    await client.get(`/cabinet/shops/${owner.shopId}/keys`);
    testApp.clock.advance(testApp.context.config.cabinetStepUpMs + 1_000);
    const keysPage = `/cabinet/shops/${owner.shopId}/keys`;
    const create = await client.post(keysPage, { name: 'late', scopes: 'read' }, { referer: keysPage });
    expect(create.statusCode).toBe(303);
    expect(create.headers.location).toBe(`/cabinet/step-up?back=${encodeURIComponent(keysPage)}`);
    const revoke = await client.post(`${keysPage}/${keyId}/revoke`, {}, { referer: keysPage });
    expect(revoke.statusCode).toBe(303);
    expect(revoke.headers.location).toMatch(/^\/cabinet\/step-up\?back=/);
    expect((await account(owner.apiKey)).statusCode).toBe(200);
    expect((await client.get(keysPage)).statusCode).toBe(200);
  });

  it('an owner creates a live shop (key and webhook secret shown once) and renames it, both audited', async () => {
    const owner = await createOwner(testApp);
    const client = await signedIn(owner);
    await client.get('/cabinet/shops');
    const created = await client.post('/cabinet/shops', { name: 'Second shop', mode: 'live' });
    expect(created.statusCode, created.body).toBe(200);
    const liveKey = /sk_live_[A-Za-z0-9_-]{43}/.exec(created.body)?.[0];
    expect(liveKey).toBeDefined();
    expect(created.body).toContain('data-copy="new-webhook-secret"');
    const shop = (await account(liveKey!)).json();
    expect(shop).toMatchObject({ merchant_id: owner.merchantId, shop_name: 'Second shop', mode: 'live' });

    const overview = await client.get(`/cabinet/shops/${shop.shop_id}`);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('Second shop');
    expect(overview.body).not.toContain(liveKey!);
    expect(overview.body).not.toContain(`/cabinet/shops/${shop.shop_id}/sandbox`);
    const renamed = await client.post(`/cabinet/shops/${shop.shop_id}/rename`, { name: 'Main live shop' });
    expect(renamed.headers.location).toBe(`/cabinet/shops/${shop.shop_id}?renamed=1`);
    expect((await client.get(`/cabinet/shops/${shop.shop_id}`)).body).toContain('Main live shop');

    const audit = (await auditOf(owner.merchantId)).filter((row) => row.action.startsWith('shop.'));
    expect(audit.map((row) => [row.action, row.shop_id, row.actor_kind])).toEqual([
      ['shop.created', shop.shop_id, 'user'],
      ['shop.renamed', shop.shop_id, 'user'],
    ]);
    expect(audit[0]!.details).toEqual({ name: 'Second shop', mode: 'live' });
    expect(audit[1]!.details).toEqual({ from: 'Second shop', to: 'Main live shop' });
  });

  it('a sandbox shop links its sandbox tools; a viewer sees no create or rename form and may not post them', async () => {
    const owner = await createOwner(testApp);
    const viewer = await signedIn(await addMember(testApp, owner, 'viewer'));
    const overview = await viewer.get(`/cabinet/shops/${owner.shopId}`);
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain(`/cabinet/shops/${owner.shopId}/webhooks`);
    expect(overview.body).not.toContain(`/cabinet/shops/${owner.shopId}/keys`);
    expect(overview.body).not.toContain(`/cabinet/shops/${owner.shopId}/sandbox`);
    expect(overview.body).not.toContain(`/cabinet/shops/${owner.shopId}/rename`);
    expect((await viewer.get('/cabinet/shops')).body).not.toContain('action="/cabinet/shops"');
    expect((await viewer.post(`/cabinet/shops/${owner.shopId}/rename`, { name: 'Nope' })).statusCode).toBe(403);
    await viewer.get('/cabinet/account');
    expect((await viewer.post('/cabinet/shops', { name: 'Nope', mode: 'sandbox' })).statusCode).toBe(403);
    const ownerClient = await signedIn(owner);
    expect((await ownerClient.get(`/cabinet/shops/${owner.shopId}`)).body).toContain(
      `/cabinet/shops/${owner.shopId}/sandbox`,
    );
  });

  it("another merchant's shop and its keys are not found", async () => {
    const owner = await createOwner(testApp);
    const stranger = await createOwner(testApp);
    const strangerKeyId = (await account(stranger.apiKey)).json().key_id as string;
    const client = await signedIn(owner);
    expect((await client.get(`/cabinet/shops/${stranger.shopId}`)).statusCode).toBe(404);
    expect((await client.get(`/cabinet/shops/${stranger.shopId}/keys`)).statusCode).toBe(404);
    await client.get(`/cabinet/shops/${owner.shopId}/keys`);
    expect((await client.post(`/cabinet/shops/${stranger.shopId}/keys/${strangerKeyId}/revoke`)).statusCode).toBe(404);
    await client.get(`/cabinet/shops/${owner.shopId}/keys`);
    expect((await client.post(`/cabinet/shops/${owner.shopId}/keys/${strangerKeyId}/revoke`)).statusCode).toBe(404);
    await client.get(`/cabinet/shops/${owner.shopId}`);
    expect((await client.post(`/cabinet/shops/${stranger.shopId}/rename`, { name: 'Mine now' })).statusCode).toBe(404);
    expect((await account(stranger.apiKey)).statusCode).toBe(200);
  });
});
