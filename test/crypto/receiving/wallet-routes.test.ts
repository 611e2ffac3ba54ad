// /v1/crypto/wallets through the real app: one permanent address per client_id
// and network (the same wallet again), validation on both sides of each bound,
// list filters, block/unblock and their 409s, and another shop's wallets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../support/databases.ts';
import {
  createCryptoTestApp,
  externalId,
  micro,
  TRON_ADDRESS_PATTERN,
  type CryptoTestApp,
} from './crypto-routes-support.ts';

describe.each(backends)('crypto wallet routes on %s', (backend) => {
  let testApp: CryptoTestApp;
  let key: string;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    ({ key } = await testApp.shop());
  });
  afterAll(() => testApp.close());

  const create = (body: unknown, withKey = key) => testApp.call(withKey, 'POST', '/v1/crypto/wallets', body);
  const newWallet = async (withKey = key) =>
    (await create({ client_id: externalId('client'), network: 'TRC20' }, withKey)).json();

  async function expectRefused(body: unknown, field: string) {
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.json().message).toContain(field);
  }

  it('creates an active wallet with a permanent address: 201, then 200 with the same wallet', async () => {
    const body = { client_id: externalId('client'), network: 'TRC20' };
    const first = await create(body);
    expect(first.statusCode, first.body).toBe(201);
    const wallet = first.json();
    expect(wallet).toMatchObject({ client_id: body.client_id, network: 'TRC20', asset: 'USDT', status: 'active' });
    expect(wallet.wallet_id).toMatch(/^wal_[0-9a-z]{26}$/);
    expect(wallet.address).toMatch(TRON_ADDRESS_PATTERN);
    expect(micro(wallet.received_amount)).toBe(0n);
    expect(micro(wallet.held_amount)).toBe(0n);
    const again = await create(body);
    expect(again.statusCode).toBe(200);
    expect(again.json().wallet_id).toBe(wallet.wallet_id);
    expect(again.json().address).toBe(wallet.address);
  });

  it('another client_id gets another address; the same client_id in another shop another wallet', async () => {
    const clientId = externalId('client');
    const one = (await create({ client_id: clientId, network: 'TRC20' })).json();
    const two = (await create({ client_id: `${clientId}-2`, network: 'TRC20' })).json();
    const other = await testApp.shop();
    const three = (await create({ client_id: clientId, network: 'TRC20' }, other.key)).json();
    expect(new Set([one.address, two.address, three.address]).size).toBe(3);
    expect(new Set([one.wallet_id, two.wallet_id, three.wallet_id]).size).toBe(3);
  });

  it('20 identical requests at once make one wallet', async () => {
    const body = { client_id: externalId('client'), network: 'TRC20' };
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(body)));
    expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(1);
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(19);
    expect(new Set(responses.map((response) => response.json().wallet_id)).size).toBe(1);
  });

  it('client_id: 1 and 100 characters pass, empty, 101 characters and a number do not', async () => {
    expect((await create({ client_id: 'c', network: 'TRC20' })).statusCode).toBe(201);
    const hundred = externalId('client').padEnd(100, 'x');
    expect((await create({ client_id: hundred, network: 'TRC20' })).statusCode).toBe(201);
    await expectRefused({ client_id: '', network: 'TRC20' }, 'client_id');
    await expectRefused({ client_id: `${hundred}y`, network: 'TRC20' }, 'client_id');
    await expectRefused({ client_id: 7, network: 'TRC20' }, 'client_id');
    await expectRefused({ network: 'TRC20' }, 'client_id');
  });

  it('refuses any network but TRC20, naming the supported ones, and unknown fields', async () => {
    for (const network of ['ERC20', 'trc20x', 'TRON']) {
      const response = await create({ client_id: externalId('client'), network });
      expect(response.statusCode, network).toBe(400);
      expect(response.json().message).toContain('network');
      expect(response.json().message).toContain('TRC20');
    }
    await expectRefused({ client_id: externalId('client') }, 'network');
    await expectRefused({ client_id: externalId('client'), network: 'TRC20', label: 'x' }, 'label');
  });

  it('GET by id answers the wallet with its deposits (none yet) and totals', async () => {
    const wallet = await newWallet();
    const read = await testApp.call(key, 'GET', `/v1/crypto/wallets/${wallet.wallet_id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ ...wallet, deposits: [] });
  });

  it('lists newest first, filters by client_id and status, pages with a cursor', async () => {
    const { key: listKey } = await testApp.shop();
    const wallets = [];
    for (let index = 0; index < 3; index++) {
      wallets.push(await newWallet(listKey));
      testApp.clock.advance(1000);
    }
    await testApp.call(listKey, 'POST', `/v1/crypto/wallets/${wallets[1].wallet_id}/block`);
    const all = (await testApp.call(listKey, 'GET', '/v1/crypto/wallets')).json();
    expect(all.data.map((wallet: { wallet_id: string }) => wallet.wallet_id)).toEqual(
      wallets.map((wallet) => wallet.wallet_id).reverse(),
    );
    const first = (await testApp.call(listKey, 'GET', '/v1/crypto/wallets?limit=2')).json();
    expect(first.data).toHaveLength(2);
    const rest = (
      await testApp.call(listKey, 'GET', `/v1/crypto/wallets?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`)
    ).json();
    expect(rest).toMatchObject({ next_cursor: null });
    expect(rest.data.map((wallet: { wallet_id: string }) => wallet.wallet_id)).toEqual([wallets[0].wallet_id]);
    const blocked = (await testApp.call(listKey, 'GET', '/v1/crypto/wallets?status=blocked')).json();
    expect(blocked.data.map((wallet: { wallet_id: string }) => wallet.wallet_id)).toEqual([wallets[1].wallet_id]);
    const active = (await testApp.call(listKey, 'GET', '/v1/crypto/wallets?status=active')).json();
    expect(active.data).toHaveLength(2);
    const byClient = (
      await testApp.call(listKey, 'GET', `/v1/crypto/wallets?client_id=${encodeURIComponent(wallets[2].client_id)}`)
    ).json();
    expect(byClient.data.map((wallet: { wallet_id: string }) => wallet.wallet_id)).toEqual([wallets[2].wallet_id]);
    for (const query of ['status=frozen', 'limit=0', 'limit=101', `client_id=${'c'.repeat(101)}`, 'cursor=garbage']) {
      expect((await testApp.call(listKey, 'GET', `/v1/crypto/wallets?${query}`)).statusCode, query).toBe(400);
    }
  });

  it('block, block again (409 invalid_state), unblock, unblock again (409 invalid_state)', async () => {
    const wallet = await newWallet();
    const path = `/v1/crypto/wallets/${wallet.wallet_id}`;
    const blocked = await testApp.call(key, 'POST', `${path}/block`);
    expect(blocked.statusCode, blocked.body).toBe(200);
    expect(blocked.json()).toMatchObject({ wallet_id: wallet.wallet_id, status: 'blocked' });
    const twice = await testApp.call(key, 'POST', `${path}/block`);
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error).toBe('invalid_state');
    expect((await testApp.call(key, 'GET', path)).json().status).toBe('blocked');
    const unblocked = await testApp.call(key, 'POST', `${path}/unblock`);
    expect(unblocked.statusCode).toBe(200);
    expect(unblocked.json().status).toBe('active');
    const again = await testApp.call(key, 'POST', `${path}/unblock`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('invalid_state');
  });

  it('another shop’s wallet is 404 for reading, blocking and unblocking, and absent from lists', async () => {
    const other = await testApp.shop();
    const theirs = await newWallet(other.key);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/block'],
      ['POST', '/unblock'],
    ] as const) {
      const response = await testApp.call(key, method, `/v1/crypto/wallets/${theirs.wallet_id}${suffix}`);
      expect(response.statusCode, `${method} ${suffix}`).toBe(404);
      expect(response.json().error).toBe('not_found');
    }
    expect((await testApp.call(other.key, 'GET', `/v1/crypto/wallets/${theirs.wallet_id}`)).json().status).toBe(
      'active',
    );
    const listed = (
      await testApp.call(key, 'GET', `/v1/crypto/wallets?client_id=${encodeURIComponent(theirs.client_id)}`)
    ).json();
    expect(listed.data).toEqual([]);
  });

  it('a live shop without configured TRON keys gets 503 naming the setting, and no wallet', async () => {
    const live = await testApp.shop('live');
    const response = await create({ client_id: externalId('client'), network: 'TRC20' }, live.key);
    expect(response.statusCode, response.body).toBe(503);
    expect(response.json().message).toContain('PAYGATE_TRON_XPUB_FILE');
    expect((await testApp.call(live.key, 'GET', '/v1/crypto/wallets')).json().data).toEqual([]);
  });

  it('an unknown wallet id is 404', async () => {
    for (const id of ['wal_01jcx1a2b3c4d5e6f7g8h9j0k4', 'inv_01jcx1a2b3c4d5e6f7g8h9j0k4', 'x']) {
      expect((await testApp.call(key, 'GET', `/v1/crypto/wallets/${id}`)).statusCode, id).toBe(404);
      expect((await testApp.call(key, 'POST', `/v1/crypto/wallets/${id}/block`)).statusCode, id).toBe(404);
    }
  });
});
