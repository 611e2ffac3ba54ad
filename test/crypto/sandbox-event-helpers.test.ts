// The two test helpers `paygate trigger` needs beyond the chain's: expiring an
// invoice now, and a cabinet withdrawal asked for and approved from the API.
// Their success paths are driven end to end in test/cli/trigger.test.ts; here:
// what they refuse, that a refusal changes nothing, and 404 on live shops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { tronAddressFromEvm } from '../../src/crypto/tron/address.ts';
import { backends } from '../support/databases.ts';
import { createCryptoTestApp, invoiceBody, type CryptoTestApp } from './receiving/crypto-routes-support.ts';

describe.each(backends)('sandbox event helpers on %s', (backend) => {
  let testApp: CryptoTestApp;
  let key: string;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    ({ key } = await testApp.shop());
  });
  afterAll(() => testApp.close());

  const invoice = async (withKey = key) =>
    (await testApp.call(withKey, 'POST', '/v1/crypto/invoices', invoiceBody())).json() as { invoice_id: string };
  const expire = (invoiceId: string, withKey = key) =>
    testApp.call(withKey, 'POST', `/v1/test_helpers/crypto/invoices/${invoiceId}/expire`);

  it('expire closes a pending invoice now with one crypto.invoice.updated; a second expire is 409 invalid_state', async () => {
    const { invoice_id } = await invoice();
    const expired = await expire(invoice_id);
    expect(expired.statusCode, expired.body).toBe(200);
    expect(expired.json()).toMatchObject({ invoice_id, status: 'expired', paid_amount: '0' });
    expect(Date.parse(expired.json().expires_at)).toBeLessThanOrEqual(Date.now());
    const events = (await testApp.call(key, 'GET', '/v1/webhooks/events?type=crypto.invoice.updated')).json().data;
    expect(
      events.filter((event: { data: { invoice_id: string } }) => event.data.invoice_id === invoice_id),
    ).toHaveLength(1);
    const again = await expire(invoice_id);
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('invalid_state');
  });

  it("expire on another shop's invoice or an unknown id is 404 not_found", async () => {
    const other = await testApp.shop();
    const { invoice_id } = await invoice(other.key);
    expect((await expire(invoice_id)).statusCode).toBe(404);
    expect((await expire('inv_missing')).statusCode).toBe(404);
    const untouched = await testApp.call(other.key, 'GET', `/v1/crypto/invoices/${invoice_id}`);
    expect(untouched.json().status).toBe('pending');
  });

  it('on a live shop both helpers answer 404 and change nothing', async () => {
    const live = await testApp.shop('live');
    // A sandbox invoice's id: the live key reaches no helper whatever the id.
    const { invoice_id } = await invoice();
    const response = await expire(invoice_id, live.key);
    expect(response.statusCode).toBe(404);
    expect(response.json().message).toContain('sandbox shops only');
    expect((await testApp.call(key, 'GET', `/v1/crypto/invoices/${invoice_id}`)).json().status).toBe('pending');
    const withdrawal = await testApp.call(live.key, 'POST', '/v1/test_helpers/crypto/withdrawals', {
      external_id: 'wd-live',
      amount: '1',
      address: tronAddressFromEvm(randomBytes(20)),
    });
    expect(withdrawal.statusCode).toBe(404);
    expect(withdrawal.json().error).toBe('not_found');
  });

  it('a withdrawal beyond the balance is refused insufficient_funds and reserves nothing', async () => {
    const before = (await testApp.call(key, 'GET', '/v1/crypto/balance')).json();
    const response = await testApp.call(key, 'POST', '/v1/test_helpers/crypto/withdrawals', {
      external_id: 'wd-too-much',
      amount: '5',
      address: tronAddressFromEvm(randomBytes(20)),
    });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.json().error).toBe('insufficient_funds');
    expect((await testApp.call(key, 'GET', '/v1/crypto/balance')).json()).toEqual(before);
  });

  it('a withdrawal body is checked like a payout: a bad address or amount is 400 invalid_request', async () => {
    for (const body of [
      { external_id: 'wd-bad', amount: '1', address: 'T123' },
      { external_id: 'wd-bad', amount: '1.001', address: tronAddressFromEvm(randomBytes(20)) },
      { external_id: 'wd-bad', amount: '1', address: tronAddressFromEvm(randomBytes(20)), extra: 1 },
    ]) {
      const response = await testApp.call(key, 'POST', '/v1/test_helpers/crypto/withdrawals', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error).toBe('invalid_request');
    }
  });
});
