// /v1/test_helpers/crypto/*: deposits, blocks, reorgs, one-shot transfer
// outcomes, draining the hot wallet's TRX and the faucet on the sandbox chain,
// their bounds on both sides, and 404 on live shops (as the payments' helpers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdtText } from '../../../src/crypto/receiving/receiving-views.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
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

  const helper = (path: string, body: unknown, withKey = key) =>
    testApp.call(withKey, 'POST', `/v1/test_helpers/crypto/${path}`, body);

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
    const payers = (await testApp.crypto.chain.sandboxChain()).chain.payers;
    expect(payers.length).toBeGreaterThan(1);
    const response = await helper('deposits', { address, amount: '1', from: payers[1]!.address });
    expect(response.statusCode, response.body).toBe(200);
    await expectRefused('deposits', { address, amount: '1', from: address }, 'from');
  });

  it('deposit amounts follow the API’s USDT rules; the address must be a TRON address', async () => {
    for (const amount of ['1e3', '10.0000001', '-1', '', '0'])
      await expectRefused('deposits', { address, amount }, 'amount');
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

  const sandboxNode = async () => (await testApp.crypto.chain.forMode('sandbox')).node;

  it('next_transfer_outcome: each outcome, seen by the production node client on the next transfer to the address, once', async () => {
    const node = await sandboxNode();
    const target = (await testApp.call(key, 'POST', '/v1/crypto/invoices', invoiceBody())).json().address;
    const expected = {
      revert: { contractResult: 'REVERT', succeeded: false, transfers: [] },
      out_of_energy: { contractResult: 'OUT_OF_ENERGY', succeeded: false, transfers: [] },
    } as const;
    for (const outcome of ['revert', 'out_of_energy', 'never_included'] as const) {
      const armed = await helper('next_transfer_outcome', { address: target, outcome });
      expect(armed.statusCode, armed.body).toBe(200);
      expect(armed.json()).toEqual({ address: target, outcome });
      const balanceBefore = await node.getUsdtBalance(target);
      const sent = (await helper('deposits', { address: target, amount: '2' })).json().tx_id as string;
      await helper('blocks', { count: 1 });
      const seen = await node.getTransactionOutcome(sent);
      if (outcome === 'never_included') expect(seen).toBeNull();
      else {
        expect(seen).toMatchObject(expected[outcome]);
        expect(seen!.feeSun).toBeGreaterThan(0n);
      }
      expect(await node.getUsdtBalance(target)).toBe(balanceBefore);
      // Once: the next transfer to the address lands.
      const next = (await helper('deposits', { address: target, amount: '2' })).json().tx_id as string;
      await helper('blocks', { count: 1 });
      expect(await node.getTransactionOutcome(next)).toMatchObject({
        contractResult: 'SUCCESS',
        succeeded: true,
        transfers: [{ to: target, amount: 2_000_000n }],
      });
    }
  });

  it('next_transfer_outcome: the address and the outcome are checked', async () => {
    await expectRefused('next_transfer_outcome', { address, outcome: 'explode' }, 'outcome');
    await expectRefused('next_transfer_outcome', { address }, 'outcome');
    await expectRefused('next_transfer_outcome', { address: 'T123', outcome: 'revert' }, 'address');
    await expectRefused('next_transfer_outcome', { outcome: 'revert' }, 'address');
    await expectRefused('next_transfer_outcome', { address, outcome: 'revert', extra: 1 }, 'extra');
  });

  it('hot_wallet/drain_trx takes every sun from the sandbox hot wallet; the faucet without an address puts TRX and USDT back', async () => {
    const access = await testApp.crypto.chain.forMode('sandbox');
    const hotWallet = access.addressKey.hotWalletAddress;
    const funded = await helper('faucet', { trx: '150', usdt: '1000.5' });
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json().address).toBe(hotWallet);
    const trxBefore = (await access.node.getAccount(hotWallet)).balanceSun;
    expect(trxBefore).toBeGreaterThanOrEqual(150_000_000n);
    const drained = await helper('hot_wallet/drain_trx', {});
    expect(drained.statusCode, drained.body).toBe(200);
    expect(drained.json()).toEqual({ address: hotWallet, drained_trx: usdtText(trxBefore), trx: '0' });
    expect(await access.node.getAccount(hotWallet)).toMatchObject({ activated: true, balanceSun: 0n });
    expect(await access.node.getUsdtBalance(hotWallet)).toBeGreaterThanOrEqual(1_000_500_000n);
    const again = await helper('hot_wallet/drain_trx', {});
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().drained_trx).toBe('0');
    const refilled = await helper('faucet', { address: hotWallet, trx: '0.000001' });
    expect(refilled.json()).toMatchObject({ address: hotWallet, trx: '0.000001' });
    await expectRefused('hot_wallet/drain_trx', { address: hotWallet }, 'address');
  });

  it('blacklist: without an address it makes one for the shop; the production node client sees isBlackListed follow; the address and listed are checked', async () => {
    const node = await sandboxNode();
    const made = await helper('blacklist', { listed: true });
    expect(made.statusCode, made.body).toBe(200);
    const own = made.json().address as string;
    expect(made.json()).toEqual({ address: own, listed: true });
    expect(await node.isUsdtBlacklisted(tronAddress(own))).toBe(true);
    expect((await helper('blacklist', { address: own, listed: false })).json()).toEqual({
      address: own,
      listed: false,
    });
    expect(await node.isUsdtBlacklisted(tronAddress(own))).toBe(false);
    const unlisted = (await helper('blacklist', { listed: false })).json();
    expect(unlisted).toEqual({ address: expect.stringMatching(/^T/), listed: false });
    expect(unlisted.address).not.toBe(own);
    await expectRefused('blacklist', { address: 'T123', listed: true }, 'address');
    await expectRefused('blacklist', { address: own, listed: 'yes' }, 'listed');
    await expectRefused('blacklist', { address: own }, 'listed');
    // Not made for this shop (here: its own deposit address, which payers of other shops may share): refused, unlisted.
    await expectRefused('blacklist', { address, listed: true }, "not one of this sandbox shop's own");
    expect(await node.isUsdtBlacklisted(tronAddress(address))).toBe(false);
  });

  it('faucet: an address made for the shop is its own; another shop’s address and a payer are refused', async () => {
    const node = await sandboxNode();
    const own = (await helper('blacklist', { listed: false })).json().address as string;
    const funded = await helper('faucet', { address: own, usdt: '2', trx: '1' });
    expect(funded.statusCode, funded.body).toBe(200);
    expect(funded.json()).toEqual({ address: own, usdt: '2', trx: '1' });
    const other = await testApp.shop();
    const theirs = (await testApp.call(other.key, 'POST', '/v1/crypto/invoices', invoiceBody())).json().address;
    const payer = (await testApp.crypto.chain.sandboxChain()).chain.payers[0]!.address;
    for (const foreign of [theirs, payer]) {
      await expectRefused('faucet', { address: foreign, usdt: '1' }, "not one of this sandbox shop's own");
      await expectRefused('blacklist', { address: foreign, listed: true }, "not one of this sandbox shop's own");
    }
    const otherOwn = (await helper('blacklist', { listed: false }, other.key)).json().address as string;
    await expectRefused('faucet', { address: otherOwn, trx: '1' }, "not one of this sandbox shop's own");
    await expectRefused('blacklist', { address: otherOwn, listed: true }, "not one of this sandbox shop's own");
    expect(await node.getUsdtBalance(tronAddress(theirs))).toBe(0n);
    expect(await node.getAccount(tronAddress(otherOwn))).toMatchObject({ activated: false });
    expect(await node.isUsdtBlacklisted(tronAddress(otherOwn))).toBe(false);
  });

  it('faucet: amounts are decimal strings above 0 with at most 6 places, up to 1,000,000; one of them is needed', async () => {
    const node = await sandboxNode();
    const fresh = (await testApp.call(key, 'POST', '/v1/crypto/invoices', invoiceBody())).json().address;
    const response = await helper('faucet', { address: fresh, usdt: '1000000', trx: '0.000001' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ address: fresh, usdt: '1000000', trx: '0.000001' });
    expect(await node.getUsdtBalance(fresh)).toBe(1_000_000_000_000n);
    expect(await node.getAccount(fresh)).toMatchObject({ activated: true, balanceSun: 1n });
    for (const usdt of ['0', '1000000.000001', '1e3', '0.0000001', '-1', ''])
      await expectRefused('faucet', { address: fresh, usdt }, 'usdt');
    await expectRefused('faucet', { address: fresh, usdt: 5 }, 'usdt');
    for (const trx of ['0', '1000001']) await expectRefused('faucet', { address: fresh, trx }, 'trx');
    await expectRefused('faucet', { address: fresh }, 'usdt or trx');
    await expectRefused('faucet', { address: 'T123', usdt: '1' }, 'address');
    // Refused calls changed nothing.
    expect(await node.getUsdtBalance(fresh)).toBe(1_000_000_000_000n);
  });

  it('on a live shop every helper answers 404 and changes nothing', async () => {
    const live = await testApp.shop('live');
    const head = (await helper('blocks', { count: 1 })).json().head_block;
    for (const [path, body] of [
      ['deposits', { address, amount: '1' }],
      ['blocks', { count: 1 }],
      ['reorg', { depth: 1 }],
      ['next_transfer_outcome', { address, outcome: 'revert' }],
      ['hot_wallet/drain_trx', {}],
      ['faucet', { address, usdt: '1' }],
      ['blacklist', { address, listed: true }],
    ] as const) {
      const response = await helper(path, body, live.key);
      expect(response.statusCode, path).toBe(404);
      expect(response.json().error).toBe('not_found');
    }
    expect((await helper('blocks', { count: 1 })).json().head_block).toBe(head + 1);
  });
});
