// POST/GET /v1/crypto/invoices through the real app: the resource, every
// validation rule on both sides of its bound, idempotency by external_id,
// listing with filters and cursors, the QR code, and another shop's invoices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../support/databases.ts';
import {
  createCryptoTestApp,
  externalId,
  invoiceBody,
  micro,
  TRON_ADDRESS_PATTERN,
  type CryptoTestApp,
} from './crypto-routes-support.ts';

describe.each(backends)('crypto invoice routes on %s', (backend) => {
  let testApp: CryptoTestApp;
  let key: string;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    ({ key } = await testApp.shop());
  });
  afterAll(() => testApp.close());

  const create = (body: unknown, withKey = key) => testApp.call(withKey, 'POST', '/v1/crypto/invoices', body);

  async function expectRefused(body: unknown, field: string) {
    const response = await create(body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error).toBe('invalid_request');
    expect(response.json().message).toContain(field);
  }

  describe('creating', () => {
    it('answers 201 with a pending invoice at a fresh address, its payment URI and expiry', async () => {
      const body = invoiceBody({ amount: '25.5', callback_url: 'https://shop.example.com/paygate/crypto' });
      const response = await create(body);
      expect(response.statusCode, response.body).toBe(201);
      const invoice = response.json();
      expect(invoice).toMatchObject({
        external_id: body.external_id,
        status: 'pending',
        network: 'TRC20',
        asset: 'USDT',
        lifetime_s: 3600,
        callback_url: 'https://shop.example.com/paygate/crypto',
        paid_at: null,
      });
      expect(invoice.invoice_id).toMatch(/^inv_[0-9a-z]{26}$/);
      expect(invoice.address).toMatch(TRON_ADDRESS_PATTERN);
      expect(micro(invoice.amount)).toBe(25_500_000n);
      expect(micro(invoice.paid_amount)).toBe(0n);
      const uri = /^tron:(T\w+)\?amount=([\d.]+)$/.exec(invoice.payment_uri);
      expect(uri?.[1]).toBe(invoice.address);
      expect(micro(uri![2]!)).toBe(25_500_000n);
      expect(Date.parse(invoice.expires_at) - Date.parse(invoice.created_at)).toBe(3600 * 1000);
      expect(invoice.created_at).toBe(testApp.clock.now().toISOString());
    });

    it('gives every invoice its own address', async () => {
      const addresses = new Set<string>();
      for (let index = 0; index < 5; index++) addresses.add((await create(invoiceBody())).json().address);
      expect(addresses.size).toBe(5);
    });

    it.each([
      ['10', 10_000_000n],
      ['10.5', 10_500_000n],
      ['0.000001', 1n],
      ['1000000000', 1_000_000_000_000_000n],
      ['1000000000.000000', 1_000_000_000_000_000n],
    ])('accepts the amount "%s"', async (amount, expectedMicro) => {
      const response = await create(invoiceBody({ amount }));
      expect(response.statusCode, response.body).toBe(201);
      expect(micro(response.json().amount)).toBe(expectedMicro);
    });

    it.each([
      ['1e3'],
      ['10.0000001'],
      ['-1'],
      [''],
      ['0'],
      ['0.000000'],
      ['1000000000.000001'],
      ['abc'],
      [' 10'],
      ['10,5'],
      ['0x10'],
      ['Infinity'],
    ])('refuses the amount "%s" with 400 naming the field', (amount) =>
      expectRefused(invoiceBody({ amount }), 'amount'),
    );

    it('refuses an amount sent as a JSON number', () => expectRefused(invoiceBody({ amount: 10 }), 'amount'));
    it('refuses an amount of null, and a missing amount', async () => {
      await expectRefused(invoiceBody({ amount: null }), 'amount');
      const { amount: _amount, ...withoutAmount } = invoiceBody();
      await expectRefused(withoutAmount, 'amount');
    });

    it('refuses any network but TRC20, naming the supported ones', async () => {
      for (const network of ['ERC20', 'TRC-20', 'BTC', '', 'TRC20 ']) {
        const response = await create(invoiceBody({ network }));
        expect(response.statusCode, network).toBe(400);
        expect(response.json().message).toContain('network');
        if (network !== '') expect(response.json().message).toContain('TRC20');
      }
      await expectRefused(invoiceBody({ network: 20 }), 'network');
    });

    it.each([
      [300, 201],
      [43_200, 201],
      [299, 400],
      [43_201, 400],
      [0, 400],
      [-300, 400],
    ])('lifetime_s %d answers %d', async (lifetime, status) => {
      const response = await create(invoiceBody({ lifetime_s: lifetime }));
      expect(response.statusCode, response.body).toBe(status);
      if (status === 201) {
        const invoice = response.json();
        expect(invoice.lifetime_s).toBe(lifetime);
        expect(Date.parse(invoice.expires_at) - Date.parse(invoice.created_at)).toBe(lifetime * 1000);
      } else {
        expect(response.json().message).toContain('lifetime_s');
      }
    });

    it('refuses a lifetime_s that is not an integer', async () => {
      await expectRefused(invoiceBody({ lifetime_s: 600.5 }), 'lifetime_s');
      await expectRefused(invoiceBody({ lifetime_s: '600' }), 'lifetime_s');
    });

    it('external_id: 1 and 100 characters pass, empty and 101 do not', async () => {
      expect((await create(invoiceBody({ external_id: 'a' }))).statusCode).toBe(201);
      const hundred = externalId('x').padEnd(100, 'x');
      expect((await create(invoiceBody({ external_id: hundred }))).statusCode).toBe(201);
      await expectRefused(invoiceBody({ external_id: '' }), 'external_id');
      await expectRefused(invoiceBody({ external_id: `${hundred}y` }), 'external_id');
      await expectRefused(invoiceBody({ external_id: 42 }), 'external_id');
    });

    it('callback_url follows the payments’ rules: a URL, http(s), at most 2048 characters; null is none', async () => {
      expect((await create(invoiceBody({ callback_url: null }))).json().callback_url).toBeNull();
      const longest = `https://shop.example.com/${'a'.repeat(2048 - 'https://shop.example.com/'.length)}`;
      expect((await create(invoiceBody({ callback_url: longest }))).statusCode).toBe(201);
      await expectRefused(invoiceBody({ callback_url: `${longest}a` }), 'callback_url');
      await expectRefused(invoiceBody({ callback_url: 'not a url' }), 'callback_url');
      await expectRefused(invoiceBody({ callback_url: 'ftp://shop.example.com/hook' }), 'callback_url');
      await expectRefused(invoiceBody({ callback_url: 'https://user:secret@shop.example.com/hook' }), 'callback_url');
    });

    it('refuses unknown fields and a body that is not an object', async () => {
      await expectRefused(invoiceBody({ currency: 'USDT' }), 'currency');
      const response = await create('[]');
      expect(response.statusCode).toBe(400);
    });
  });

  it('a live shop without configured TRON keys gets 503 naming the setting, and no invoice', async () => {
    const live = await testApp.shop('live');
    const response = await create(invoiceBody(), live.key);
    expect(response.statusCode, response.body).toBe(503);
    expect(response.json().error).toBe('service_unavailable');
    expect(response.json().message).toContain('PAYGATE_TRON_XPUB_FILE');
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    expect((await testApp.call(live.key, 'GET', '/v1/crypto/invoices')).json().data).toEqual([]);
  });

  describe('idempotency by external_id', () => {
    it('the same parameters again answer 200 with the same invoice', async () => {
      const body = invoiceBody({ lifetime_s: 900 });
      const first = await create(body);
      const again = await create(body);
      expect(first.statusCode).toBe(201);
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
    });

    it.each([
      ['amount', { amount: '25.6' }],
      ['lifetime_s', { lifetime_s: 901 }],
      ['callback_url', { callback_url: 'https://other.example.com/hook' }],
    ])(
      'a different %s with the same external_id is 409 duplicate_external_id and creates nothing',
      async (_field, change) => {
        const body = invoiceBody({ lifetime_s: 900 });
        const first = (await create(body)).json();
        const response = await create({ ...body, ...change });
        expect(response.statusCode, response.body).toBe(409);
        expect(response.json().error).toBe('duplicate_external_id');
        const listed = (
          await testApp.call(
            key,
            'GET',
            `/v1/crypto/invoices?external_id=${encodeURIComponent(String(body.external_id))}`,
          )
        ).json();
        expect(listed.data.map((invoice: { invoice_id: string }) => invoice.invoice_id)).toEqual([first.invoice_id]);
      },
    );

    it('the same external_id in two shops makes two invoices', async () => {
      const other = await testApp.shop();
      const body = invoiceBody();
      const mine = await create(body);
      const theirs = await create(body, other.key);
      expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
      expect(theirs.json().invoice_id).not.toBe(mine.json().invoice_id);
      expect(theirs.json().address).not.toBe(mine.json().address);
    });

    it('50 identical requests at once make one invoice: one 201, the rest 200 with it', async () => {
      const body = invoiceBody();
      const responses = await Promise.all(Array.from({ length: 50 }, () => create(body)));
      const statuses = responses.map((response) => response.statusCode).sort();
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 200)).toHaveLength(49);
      expect(new Set(responses.map((response) => response.json().invoice_id)).size).toBe(1);
      const listed = (
        await testApp.call(
          key,
          'GET',
          `/v1/crypto/invoices?external_id=${encodeURIComponent(String(body.external_id))}`,
        )
      ).json();
      expect(listed.data).toHaveLength(1);
    });
  });

  describe('reading', () => {
    it('GET by id answers the invoice as created', async () => {
      const created = (await create(invoiceBody())).json();
      const read = await testApp.call(key, 'GET', `/v1/crypto/invoices/${created.invoice_id}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(created);
    });

    it('an unknown or malformed id is 404', async () => {
      for (const id of ['inv_01jcx1a2b3c4d5e6f7g8h9j0k3', 'nope', 'wal_01jcx1a2b3c4d5e6f7g8h9j0k3']) {
        const response = await testApp.call(key, 'GET', `/v1/crypto/invoices/${id}`);
        expect(response.statusCode, id).toBe(404);
        expect(response.json().error).toBe('not_found');
      }
    });

    it('another shop’s invoice is 404 for reading, listing and its QR code', async () => {
      const other = await testApp.shop();
      const theirs = (await create(invoiceBody(), other.key)).json();
      expect((await testApp.call(key, 'GET', `/v1/crypto/invoices/${theirs.invoice_id}`)).statusCode).toBe(404);
      expect((await testApp.call(key, 'GET', `/v1/crypto/invoices/${theirs.invoice_id}/qr.svg`)).statusCode).toBe(404);
      const listed = (
        await testApp.call(key, 'GET', `/v1/crypto/invoices?external_id=${encodeURIComponent(theirs.external_id)}`)
      ).json();
      expect(listed.data).toEqual([]);
    });

    it('the QR code is an SVG image of the payment URI', async () => {
      const created = (await create(invoiceBody())).json();
      const response = await testApp.call(key, 'GET', `/v1/crypto/invoices/${created.invoice_id}/qr.svg`);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^image\/svg\+xml/);
      expect(response.body).toMatch(/<svg[\s\S]*<\/svg>\s*$/);
    });
  });

  describe('listing', () => {
    it('pages newest first with limit and cursor, to the end', async () => {
      const { key: listKey } = await testApp.shop();
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) {
        ids.push((await create(invoiceBody(), listKey)).json().invoice_id);
        testApp.clock.advance(1000);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 5; page++) {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const response = await testApp.call(listKey, 'GET', `/v1/crypto/invoices${query}`);
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json();
        expect(body.data.length).toBeLessThanOrEqual(2);
        seen.push(...body.data.map((invoice: { invoice_id: string }) => invoice.invoice_id));
        cursor = body.next_cursor;
        if (cursor === null) break;
      }
      expect(seen).toEqual([...ids].reverse());
    });

    it('defaults to 20 and takes limit 1 to 100', async () => {
      const { key: listKey } = await testApp.shop();
      for (let index = 0; index < 21; index++) await create(invoiceBody(), listKey);
      expect((await testApp.call(listKey, 'GET', '/v1/crypto/invoices')).json().data).toHaveLength(20);
      expect((await testApp.call(listKey, 'GET', '/v1/crypto/invoices?limit=1')).json().data).toHaveLength(1);
      expect((await testApp.call(listKey, 'GET', '/v1/crypto/invoices?limit=100')).json().data).toHaveLength(21);
      for (const limit of ['0', '101', 'ten', '-1']) {
        const response = await testApp.call(listKey, 'GET', `/v1/crypto/invoices?limit=${limit}`);
        expect(response.statusCode, limit).toBe(400);
        expect(response.json().message).toContain('limit');
      }
    });

    it('filters by status and external_id; an unknown status or a garbled cursor is 400', async () => {
      const created = (await create(invoiceBody())).json();
      const pending = (await testApp.call(key, 'GET', '/v1/crypto/invoices?status=pending&limit=100')).json();
      expect(pending.data.every((invoice: { status: string }) => invoice.status === 'pending')).toBe(true);
      const paid = (await testApp.call(key, 'GET', '/v1/crypto/invoices?status=paid')).json();
      expect(paid.data).toEqual([]);
      const byExternal = (
        await testApp.call(key, 'GET', `/v1/crypto/invoices?external_id=${encodeURIComponent(created.external_id)}`)
      ).json();
      expect(byExternal).toEqual({ data: [created], next_cursor: null });
      expect((await testApp.call(key, 'GET', '/v1/crypto/invoices?status=settled')).statusCode).toBe(400);
      expect((await testApp.call(key, 'GET', '/v1/crypto/invoices?cursor=garbage')).statusCode).toBe(400);
      expect((await testApp.call(key, 'GET', `/v1/crypto/invoices?external_id=${'e'.repeat(101)}`)).statusCode).toBe(
        400,
      );
    });
  });

  describe('callback_url under production rules (https only, public hosts only)', () => {
    let strictApp: CryptoTestApp;
    let strictKey: string;
    beforeAll(async () => {
      strictApp = await createCryptoTestApp(backend, {
        config: { allowHttpWebhooks: false, webhookAllowPrivate: false },
      });
      ({ key: strictKey } = await strictApp.shop());
    });
    afterAll(() => strictApp.close());

    it.each([
      ['http://shop.example.com/hook', 'https'],
      ['https://127.0.0.1/hook', '127.0.0.1'],
      ['https://10.1.2.3/hook', '10.1.2.3'],
      ['https://localhost/hook', 'localhost'],
      ['https://[::1]/hook', '::1'],
    ])('refuses %s', async (url, named) => {
      const response = await strictApp.call(
        strictKey,
        'POST',
        '/v1/crypto/invoices',
        invoiceBody({ callback_url: url }),
      );
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().message).toContain('callback_url');
      expect(response.json().message).toContain(named);
    });

    it('accepts an https URL of a public host', async () => {
      const response = await strictApp.call(
        strictKey,
        'POST',
        '/v1/crypto/invoices',
        invoiceBody({ callback_url: 'https://shop.example.com/hook' }),
      );
      expect(response.statusCode, response.body).toBe(201);
    });
  });
});
