// /v1/test_helpers/crypto/*: deposits, blocks and reorgs on the sandbox chain,
// their bounds on both sides, and 404 on live shops (as the payments' helpers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cryptoDepsFor } from '../../../src/crypto/receiving/crypto-deps.ts';
import { backends } from '../../support/databases.ts';
import { createCryptoTestApp, invoiceBody, type CryptoTestApp } from './crypto-routes-support.ts';

describe.each(backends)('crypto test helper routes on %s', (backend) => {
  let testApp: CryptoTestApp;
  let key: string;
  let address: string;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    ({ key } = await testApp.shop());
    address = (await testApp.call(key, 'POST', '/v1/crypto/invoices', invoiceBody())).json().address;
  });
  afterAll(() => testApp.close());

  const helper = (path: string, body: unknown, withKey = key) => testApp.call(withKey, 'POST', `/v1/test_helpers/crypto/${path}`, body);

  async function expectRefused(path: string, body: unknown, field: string) {
    const response = await helper(path, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.json().message).toContain(field);
  }

  it('mining advances the head by count; solidified stays 18 behind', async () => {
    const first = await helper('blocks', { count: 1 });
    expect(first.statusCode, first.body).toBe(200);
    const before = first.json();
    const after = (await helper('blocks', { count: 25 })).json();
    expect(after.head_block).toBe(before.head_block + 25);
    expect(after.solidified_block).toBe(after.head_block - 18);
  });

  it('count: 1 and 1000 pass; 0, 1001, a fraction and a string do not', async () => {
    expect((await helper('blocks', { count: 1000 })).statusCode).toBe(200);
    for (const count of [0, 1001, 2.5, '3', -1]) await expectRefused('blocks', { count }, 'count');
    await expectRefused('blocks', {}, 'count');
  });

  it('a deposit is a transaction in the pool, included by the next block', async () => {
    const response = await helper('deposits', { address, amount: '25.5' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().tx_id).toMatch(/^[0-9a-f]{64}$/);
    expect((await helper('blocks', { count: 1 })).statusCode).toBe(200);
  });

  it('from names one of the simulated chain’s payer accounts', async () => {
    const payers = (await cryptoDepsFor(testApp.context).chain.sandboxChain()).chain.payers;
    expect(payers.length).toBeGreaterThan(1);
    const response = await helper('deposits', { address, amount: '1', from: payers[1]!.address });
    expect(response.statusCode, response.body).toBe(200);
    await expectRefused('deposits', { address, amount: '1', from: address }, 'from');
  });

  it('deposit amounts follow the API’s USDT rules; the address must be a TRON address', async () => {
    for (const amount of ['1e3', '10.0000001', '-1', '', '0']) await expectRefused('deposits', { address, amount }, 'amount');
    await expectRefused('deposits', { address, amount: 10 }, 'amount');
    // The last character changed (to one it is not), so the checksum no longer matches.
    const corrupted = `${address.slice(0, -1)}${address.endsWith('x') ? 'y' : 'x'}`;
    for (const bad of ['', 'T123', '0x00000000000000000000000000000000deadbeef', corrupted]) {
      await expectRefused('deposits', { address: bad, amount: '1' }, 'address');
    }
    await expectRefused('deposits', { address, amount: '1', from: 'nobody' }, 'from');
    await expectRefused('deposits', { address, amount: '1', memo: 'x' }, 'memo');
  });

  it('reorg depth: 1 and 18 pass; 0, 19 and a fraction do not', async () => {
    await helper('blocks', { count: 40 });
    for (const depth of [1, 18]) {
      const response = await helper('reorg', { depth });
      expect(response.statusCode, response.body).toBe(200);
      expect(Number.isInteger(response.json().head_block)).toBe(true);
    }
    for (const depth of [0, 19, 1.5, '2']) await expectRefused('reorg', { depth }, 'depth');
  });

  it('on a live shop every helper answers 404 and changes nothing', async () => {
    const live = await testApp.shop('live');
    const head = (await helper('blocks', { count: 1 })).json().head_block;
    for (const [path, body] of [
      ['deposits', { address, amount: '1' }],
      ['blocks', { count: 1 }],
      ['reorg', { depth: 1 }],
    ] as const) {
      const response = await helper(path, body, live.key);
      expect(response.statusCode, path).toBe(404);
      expect(response.json().error).toBe('not_found');
    }
    expect((await helper('blocks', { count: 1 })).json().head_block).toBe(head + 1);
  });
});
