// The cabinet's payouts area through the real app on the sandbox chain: the
// payouts and batches tables narrow by status, days, amount and an exact search,
// page by cursor, download the rows the API lists for the same filter; a payout's
// page tells its history (reserved, broadcast, completed, its ledger transfers,
// its webhook events, its transaction); another merchant's payout is 404. The
// payout form quotes before it creates, creates as the API does (one payout for a
// form sent twice, the API's refusals shown), and is audited; the CSV batch
// upload shows every bad row and creates nothing, or creates the batch the file
// holds. Viewers and developers get no form and 403.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { savePayoutSettings } from '../../src/crypto/payouts/payout-settings.ts';
import type { OutgoingExecutor } from '../../src/crypto/sending/executor.ts';
import { backends } from '../support/databases.ts';
import {
  createPayoutTestApp,
  externalId,
  recipient,
  sandboxExecutor,
  type PayoutShop,
  type PayoutTestApp,
} from '../crypto/payouts/payout-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { enrol } from './two-factor-support.ts';

/** Solidified at head − 18: a transaction is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const DAY_MS = 86_400_000;

/** A multipart/form-data body as a browser sends a form with a file. */
function multipart(
  fields: Record<string, string>,
  file?: { name: string; content: Uint8Array | string },
): { payload: Buffer; contentType: string } {
  const boundary = `----paygate${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: text/csv\r\n\r\n`,
      ),
      Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe.each(backends)('cabinet payouts on %s', (backend) => {
  let testApp: PayoutTestApp;
  let executor: OutgoingExecutor;
  let owner: CabinetPerson;
  let shop: PayoutShop;
  const created: Record<
    'small' | 'middle' | 'large',
    { payout_id: string; external_id: string; recipient_address: string }
  > = {} as never;
  let completedTx = '';
  let firstDay = '';

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    owner = await createOwner(testApp);
    shop = { shopId: owner.shopId, merchantId: owner.merchantId, key: owner.apiKey };
    await testApp.fund(shop, 1_000_000_000n);
    executor = await sandboxExecutor(testApp);
    await api('POST', '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    firstDay = testApp.clock.now().toISOString().slice(0, 10);
    created.small = await api('POST', '/v1/crypto/payouts', payoutRequest('10'));
    await executor.runPass();
    await api('POST', '/v1/test_helpers/crypto/blocks', { count: 1 });
    await api('POST', '/v1/test_helpers/crypto/blocks', { count: BLOCKS_TO_FINALITY });
    await executor.runPass();
    const small = await api('GET', `/v1/crypto/payouts/${created.small.payout_id}`);
    expect(small.status).toBe('completed');
    completedTx = small.tx_hash;
    testApp.clock.advance(2 * DAY_MS);
    created.middle = await api('POST', '/v1/crypto/payouts', payoutRequest('25'));
    created.large = await api('POST', '/v1/crypto/payouts', payoutRequest('50'));
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await executor.release();
    await testApp.close();
  });

  function payoutRequest(amount: string) {
    return { external_id: externalId('payout'), network: 'TRC20', amount, address: recipient() };
  }

  async function api(method: 'GET' | 'POST', path: string, body?: unknown, key = owner.apiKey) {
    const response = await testApp.call(key, method, path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }

  async function signedIn(person: CabinetPerson): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    await client.get('/cabinet/language/en?back=%2Fcabinet');
    return client;
  }

  const payoutIdsOn = (body: string) => [...body.matchAll(/<code>(po_[0-9a-z]+)<\/code><\/td>/g)].map((m) => m[1]);

  async function payoutsOfShop(shopId: string): Promise<number> {
    const rows = await testApp.context.db
      .selectFrom('crypto_payouts')
      .select('id')
      .where('shop_id', '=', shopId)
      .execute();
    return rows.length;
  }

  describe('the payouts table and a payout page', () => {
    let client: CabinetClient;
    beforeAll(async () => {
      client = await signedIn(owner);
    });
    const base = () => `/cabinet/shops/${owner.shopId}/payouts`;

    it('lists the shop’s payouts newest first and narrows by status, days, amount and each searched field', async () => {
      const all = await client.get(base());
      expect(all.statusCode).toBe(200);
      expect(payoutIdsOn(all.body)).toEqual([created.large, created.middle, created.small].map((p) => p.payout_id));
      const cases: Array<[string, string[]]> = [
        ['status=completed', [created.small.payout_id]],
        ['status=pending', [created.large.payout_id, created.middle.payout_id]],
        [`to=${firstDay}`, [created.small.payout_id]],
        [`from=${firstDay}&to=${firstDay}`, [created.small.payout_id]],
        ['amount_min=20&amount_max=30', [created.middle.payout_id]],
        ['amount_min=50', [created.large.payout_id]],
        [`q=${created.middle.external_id}`, [created.middle.payout_id]],
        [`q=${created.large.payout_id}`, [created.large.payout_id]],
        [`q=${created.small.recipient_address}`, [created.small.payout_id]],
        [`q=${completedTx}`, [created.small.payout_id]],
        ['q=nothing-like-this', []],
      ];
      for (const [query, ids] of cases) {
        const page = await client.get(`${base()}?${query}`);
        expect(page.statusCode, query).toBe(200);
        expect(payoutIdsOn(page.body), query).toEqual(ids);
      }
    });

    it('a bad filter is 400 with the form still shown', async () => {
      for (const query of ['status=sent', 'from=2026-13-01', 'amount_min=1.1234567', 'amount_min=5&amount_max=1']) {
        const page = await client.get(`${base()}?${query}`);
        expect(page.statusCode, query).toBe(400);
        expect(page.body).toContain('name="status"');
      }
    });

    it('the CSV of a filtered table holds the ids the API lists for the same filter, in its order', async () => {
      for (const status of ['pending', 'completed']) {
        const csv = await client.get(`${base()}.csv?status=${status}&columns=payout_id`);
        expect(csv.statusCode).toBe(200);
        const [header, ...lines] = csv.body.trim().split(/\r?\n/);
        expect(header).toBe('payout_id');
        const listed = await api('GET', `/v1/crypto/payouts?status=${status}&limit=100`);
        expect(lines).toEqual(listed.data.map((payout: { payout_id: string }) => payout.payout_id));
      }
    });

    it('a completed payout’s page tells its history: reserved, broadcast, completed, ledger, webhooks, transaction', async () => {
      const page = await client.get(`${base()}/${created.small.payout_id}`);
      expect(page.statusCode).toBe(200);
      for (const shown of [
        'Created; the total debit is reserved on the balance:',
        'Transaction broadcast (processing)',
        'Completed',
        'Ledger transfer:',
        '/webhooks/events/evt_',
        completedTx,
        created.small.external_id,
        created.small.recipient_address,
      ])
        expect(page.body, shown).toContain(shown);
    });

    it('another merchant’s payout, an unknown id and an id of another form are 404', async () => {
      const other = await createOwner(testApp);
      const otherClient = await signedIn(other);
      expect(
        (await otherClient.get(`/cabinet/shops/${other.shopId}/payouts/${created.small.payout_id}`)).statusCode,
      ).toBe(404);
      expect(
        (await otherClient.get(`/cabinet/shops/${owner.shopId}/payouts/${created.small.payout_id}`)).statusCode,
      ).toBe(404);
      for (const id of ['po_00000000000000000000000000', 'nonsense', 'pob_x', "po_'--"])
        expect((await client.get(`${base()}/${encodeURIComponent(id)}`)).statusCode, id).toBe(404);
    });
  });

  describe('the batches table and a batch page', () => {
    it('lists batches with their counts, narrows by status and search, pages by cursor; a batch page lists its items', async () => {
      const batchOwner = await createOwner(testApp);
      const batchShop = { shopId: batchOwner.shopId, merchantId: batchOwner.merchantId, key: batchOwner.apiKey };
      await testApp.fund(batchShop, 1_000_000_000n);
      const big = await api(
        'POST',
        '/v1/crypto/payouts/batch',
        {
          external_id: externalId('batch'),
          network: 'TRC20',
          payouts: Array.from({ length: 51 }, () => ({
            external_id: externalId('item'),
            amount: '1',
            address: recipient(),
          })),
        },
        batchOwner.apiKey,
      );
      testApp.clock.advance(1_000);
      const small = await api(
        'POST',
        '/v1/crypto/payouts/batch',
        {
          external_id: externalId('batch'),
          network: 'TRC20',
          payouts: [payoutRequest('3')].map(({ network: _n, ...item }) => item),
        },
        batchOwner.apiKey,
      );
      const client = await signedIn(batchOwner);
      const base = `/cabinet/shops/${batchOwner.shopId}/payouts`;
      const batches = await client.get(`${base}/batches`);
      expect(batches.statusCode).toBe(200);
      const batchIds = (body: string) => [...body.matchAll(/<code>(pob_[0-9a-z]+)<\/code><\/td>/g)].map((m) => m[1]);
      expect(batchIds(batches.body)).toEqual([small.batch_id, big.batch_id]);
      expect(batchIds((await client.get(`${base}/batches?q=${big.external_id}`)).body)).toEqual([big.batch_id]);
      expect(batchIds((await client.get(`${base}/batches?status=completed`)).body)).toEqual([]);
      expect(batchIds((await client.get(`${base}/batches?amount_min=10`)).body)).toEqual([big.batch_id]);

      // 52 payouts: the first page shows 50, the cursor the last 2.
      const first = await client.get(base);
      expect(payoutIdsOn(first.body)).toHaveLength(50);
      const next = /href="([^"]*cursor=[^"]+)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
      expect(next).toBeDefined();
      const second = await client.get(next!);
      expect(payoutIdsOn(second.body)).toHaveLength(2);
      expect(new Set([...payoutIdsOn(first.body), ...payoutIdsOn(second.body)]).size).toBe(52);

      const page = await client.get(`${base}/batches/${big.batch_id}`);
      expect(page.statusCode).toBe(200);
      for (const item of big.payouts) expect(page.body).toContain(`${base}/${item.payout_id}`);
      expect(page.body).toContain('Batch created; payouts: 51');
      expect((await client.get(`${base}/batches/pob_00000000000000000000000000`)).statusCode).toBe(404);
      const outsider = await signedIn(owner);
      expect((await outsider.get(`/cabinet/shops/${owner.shopId}/payouts/batches/${big.batch_id}`)).statusCode).toBe(
        404,
      );
    });
  });

  describe('the payout form', () => {
    let client: CabinetClient;
    let formOwner: CabinetPerson;
    beforeAll(async () => {
      formOwner = await createOwner(testApp);
      await testApp.fund(
        { shopId: formOwner.shopId, merchantId: formOwner.merchantId, key: formOwner.apiKey },
        100_000_000n,
      );
      client = await signedIn(formOwner);
      await enrol(client, () => testApp.clock.now());
    });
    const base = () => `/cabinet/shops/${formOwner.shopId}/payouts`;

    async function formFields(): Promise<{ external_id: string }> {
      const form = await client.get(`${base()}/new`);
      expect(form.statusCode, form.body.slice(0, 500)).toBe(200);
      const externalIdValue = /name="external_id"[^>]*value="([^"]+)"/.exec(form.body)?.[1];
      expect(externalIdValue).toMatch(/^payout-/);
      return { external_id: externalIdValue! };
    }

    it('quotes first, then creates the payout as the API does, once for a form sent twice, audited', async () => {
      const { external_id } = await formFields();
      const address = recipient();
      const preview = await client.post(`${base()}/new/preview`, { amount: '12.50', address, external_id });
      expect(preview.statusCode).toBe(200);
      const quote = await api(
        'POST',
        '/v1/crypto/payouts/quote',
        { network: 'TRC20', amount: '12.50', address },
        formOwner.apiKey,
      );
      expect(preview.body).toContain(`<dd data-quote="network_fee">${quote.network_fee}</dd>`);
      expect(preview.body).toContain(`<dd data-quote="service_fee">${quote.service_fee}</dd>`);
      expect(preview.body).toContain(`<strong>${quote.total_debit}</strong>`);
      expect(await payoutsOfShop(formOwner.shopId)).toBe(0);

      const confirm = await client.post(`${base()}/new`, { amount: '12.50', address, external_id });
      expect(confirm.statusCode).toBe(303);
      const payoutId = /payouts\/(po_[0-9a-z]+)\?done=created/.exec(String(confirm.headers.location))?.[1];
      expect(payoutId).toBeDefined();
      const again = await client.post(`${base()}/new`, { amount: '12.50', address, external_id });
      expect(again.statusCode).toBe(303);
      expect(again.headers.location).toBe(`${base()}/${payoutId}?done=repeated`);
      expect(await payoutsOfShop(formOwner.shopId)).toBe(1);
      const payout = await api('GET', `/v1/crypto/payouts/${payoutId}`, undefined, formOwner.apiKey);
      expect(payout).toMatchObject({
        external_id,
        recipient_amount: '12.5',
        recipient_address: address,
        status: 'pending',
      });

      const audits = await testApp.context.db
        .selectFrom('audit_events')
        .selectAll()
        .where('shop_id', '=', formOwner.shopId)
        .where('action', '=', 'payout.requested')
        .execute();
      expect(audits).toHaveLength(1);
      expect(audits[0]).toMatchObject({ actor_kind: 'user', actor_id: formOwner.userId, target: payoutId });
    });

    it('shows the API’s refusals as messages and creates nothing', async () => {
      const before = await payoutsOfShop(formOwner.shopId);
      const cases: Array<[Record<string, string>, string]> = [
        [{ amount: '1000000', address: recipient() }, 'insufficient_funds'],
        [{ amount: '10', address: 'Tnot-an-address' }, 'is not a valid TRON address'],
        [{ amount: '10.123', address: recipient() }, 'more than 2 decimal places'],
      ];
      for (const [fields, message] of cases) {
        const { external_id } = await formFields();
        for (const path of ['/new/preview', '/new']) {
          if (path === '/new/preview' && message === 'insufficient_funds') continue;
          const refused = await client.post(`${base()}${path}`, { ...fields, external_id });
          expect(refused.statusCode, `${path} ${message}`).toBe(400);
          expect(refused.body).toContain(message);
          expect(refused.body).toContain('name="amount"');
        }
      }
      await savePayoutSettings(
        testApp.context.db,
        formOwner.shopId,
        {
          enabled: true,
          minAmountMicro: 5_000_000n,
          maxAmountMicro: 20_000_000n,
          serviceFeeFixedMicro: 0n,
          serviceFeeBps: 0,
        },
        testApp.clock.now(),
      );
      const { external_id } = await formFields();
      const limited = await client.post(`${base()}/new`, { amount: '30', address: recipient(), external_id });
      expect(limited.statusCode).toBe(400);
      expect(limited.body).toContain('amount_not_supported');
      await savePayoutSettings(
        testApp.context.db,
        formOwner.shopId,
        {
          enabled: false,
          minAmountMicro: 5_000_000n,
          maxAmountMicro: 20_000_000n,
          serviceFeeFixedMicro: 0n,
          serviceFeeBps: 0,
        },
        testApp.clock.now(),
      );
      const off = await client.post(`${base()}/new`, { amount: '10', address: recipient(), external_id });
      expect(off.statusCode).toBe(400);
      expect(off.body).toContain('Payouts are switched off for this shop.');
      expect(await payoutsOfShop(formOwner.shopId)).toBe(before);
    });
  });

  describe('the CSV batch upload', () => {
    let client: CabinetClient;
    let uploader: CabinetPerson;
    beforeAll(async () => {
      uploader = await createOwner(testApp);
      await testApp.fund(
        { shopId: uploader.shopId, merchantId: uploader.merchantId, key: uploader.apiKey },
        100_000_000n,
      );
      client = await signedIn(uploader);
      await enrol(client, () => testApp.clock.now());
    });
    const base = () => `/cabinet/shops/${uploader.shopId}/payouts/batches`;

    async function postMultipart(
      path: string,
      fields: Record<string, string>,
      file?: { name: string; content: Uint8Array | string },
    ) {
      const body = multipart({ csrf: client.csrf(), ...fields }, file);
      const response: LightMyRequestResponse = await testApp.app.inject({
        method: 'POST',
        url: path,
        payload: body.payload,
        headers: {
          cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
          'content-type': body.contentType,
        },
      });
      if (response.headers['content-type']?.toString().startsWith('text/html')) client.lastPage = response.body;
      return response;
    }

    async function upload(content: Uint8Array | string, externalIdOfBatch = externalId('batch')) {
      expect((await client.get(`${base()}/upload`)).statusCode).toBe(200);
      return postMultipart(`${base()}/upload`, { external_id: externalIdOfBatch }, { name: 'payouts.csv', content });
    }

    it('shows every bad row with its line, field and message, and creates nothing', async () => {
      const good = `${externalId('row')},5.00,${recipient()}`;
      const csv = [
        'external_id,amount,address',
        good,
        `${externalId('row')},5.123,${recipient()}`,
        `${externalId('row')},5,TnotAnAddress`,
        `${good.split(',')[0]},1,${recipient()}`,
        'only,two',
      ].join('\r\n');
      const refused = await upload(csv);
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('nothing was created');
      const rows = [
        ...refused.body.matchAll(/<tr data-line="(\d+)">\s*<td>\d+<\/td>\s*<td>(?:<code>([a-z_]+)<\/code>|—)<\/td>/g),
      ].map((m) => [Number(m[1]), m[2] ?? '']);
      expect(rows).toEqual([
        [3, 'amount'],
        [4, 'address'],
        [5, 'external_id'],
        [6, ''],
      ]);
      expect(await payoutsOfShop(uploader.shopId)).toBe(0);
    });

    it('refuses a file with a wrong header, over 500 rows, over the size limit or not UTF-8, creating nothing', async () => {
      const row = () => `${externalId('row')},1,${recipient()}`;
      const cases: Array<[Uint8Array | string, string]> = [
        ['id,amount,address\r\nx,1,T', 'The first row must be the header external_id,amount,address.'],
        [['external_id,amount,address', ...Array.from({ length: 501 }, row)].join('\n'), 'more than 500 payout rows'],
        [`external_id,amount,address\n${'x'.repeat(140 * 1024)},1,T`, 'larger than 128 KB'],
        [Buffer.from([0x65, 0x78, 0x74, 0xff, 0xfe, 0x0a]), 'not UTF-8'],
        ['external_id,amount,address\r\n', 'no payout rows'],
      ];
      for (const [content, message] of cases) {
        const refused = await upload(content);
        expect(refused.statusCode, message).toBe(400);
        expect(refused.body, message).toContain(message);
      }
      expect(await payoutsOfShop(uploader.shopId)).toBe(0);
    });

    it('a good file shows the total debit, then creates the batch whose items are the file’s rows, once', async () => {
      const items = Array.from({ length: 3 }, (_, i) => ({
        external_id: externalId('row'),
        amount: ['1.5', '2', '3.25'][i]!,
        address: recipient(),
      }));
      const csv = ['external_id,amount,address', ...items.map((i) => `${i.external_id},${i.amount},${i.address}`)].join(
        '\n',
      );
      const batchExternalId = externalId('batch');
      const preview = await upload(csv, batchExternalId);
      expect(preview.statusCode, preview.body.slice(0, 3000)).toBe(200);
      expect(preview.body).toContain('<dd data-preview="items">3</dd>');
      expect(await payoutsOfShop(uploader.shopId)).toBe(0);
      const encoded = /name="csv_base64" value="([^"]+)"/.exec(preview.body)?.[1];
      expect(encoded).toBeDefined();
      const createdBatch = await postMultipart(base(), { external_id: batchExternalId, csv_base64: encoded! });
      expect(createdBatch.statusCode, createdBatch.body.slice(0, 2000)).toBe(303);
      const batchId = /batches\/(pob_[0-9a-z]+)\?done=created/.exec(String(createdBatch.headers.location))?.[1];
      const batch = await api('GET', `/v1/crypto/payouts/batch/${batchId}`, undefined, uploader.apiKey);
      expect(batch.external_id).toBe(batchExternalId);
      expect(
        batch.payouts.map((p: { external_id: string; recipient_amount: string; recipient_address: string }) => [
          p.external_id,
          p.recipient_amount,
          p.recipient_address,
        ]),
      ).toEqual(items.map((i) => [i.external_id, i.amount, i.address]));
      const total = /<strong>([0-9.]+)<\/strong>/.exec(preview.body)?.[1];
      expect(batch.total_debit).toBe(total);
      // The same confirmation again is the same batch.
      await client.get(`${base()}/upload`);
      const again = await postMultipart(base(), { external_id: batchExternalId, csv_base64: encoded! });
      expect(again.headers.location).toBe(`${base()}/${batchId}?done=repeated`);
      expect(await payoutsOfShop(uploader.shopId)).toBe(3);
      const audits = await testApp.context.db
        .selectFrom('audit_events')
        .select(['action', 'actor_id', 'target'])
        .where('shop_id', '=', uploader.shopId)
        .where('action', '=', 'payout_batch.requested')
        .execute();
      expect(audits).toEqual([{ action: 'payout_batch.requested', actor_id: uploader.userId, target: batchId }]);
    });
  });

  describe('roles', () => {
    it('viewers and developers see the tables but no form, and get 403 on the form and its posts', async () => {
      for (const role of ['viewer', 'developer'] as const) {
        const member = await addMember(testApp, owner, role);
        const client = await signedIn(member);
        const base = `/cabinet/shops/${owner.shopId}/payouts`;
        const list = await client.get(base);
        expect(list.statusCode).toBe(200);
        const page = await client.get(`${base}/${created.small.payout_id}`);
        expect(page.statusCode).toBe(200);
        expect(page.body).not.toContain(`${base}/new`);
        expect((await client.get(`${base}/new`)).statusCode).toBe(403);
        expect((await client.get(`${base}/batches/upload`)).statusCode).toBe(403);
        const fields = { amount: '1', address: recipient(), external_id: externalId('x') };
        for (const path of ['/new/preview', '/new', '/batches', '/batches/upload']) {
          await client.get(base);
          expect((await client.post(`${base}${path}`, fields)).statusCode, path).toBe(403);
        }
      }
    });
  });
});
