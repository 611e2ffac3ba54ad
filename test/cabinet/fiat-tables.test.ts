// The cabinet's fiat tables through the real app: the payments table (filters by
// status, days, amount and search, a refused filter, the second page, a payment's
// page with its attempts, ledger transfers and webhook events, another merchant's
// payment), its CSV equal to GET /v1/payments for the same filter and safe from
// formula injection; the balance operations table (type, days, pages, links to
// objects, a debit stays a number in the CSV); the webhook events table (delivery
// status, search by type, event and object, the event page's link to its object);
// and who may open which table and download it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/cabinet/roles.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { getJson, postHelper, postPayment } from '../payments/payment-test-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { csvRecords, DECLINE_CARD, linkedIds, nextPageLink, payOnPage, SUCCESS_CARD } from './fiat-tables-support.ts';

const EN = { 'accept-language': 'en' };
const HOOK = 'https://merchant.example/hooks';

interface Payment {
  readonly payment_id: string;
  readonly order_code: string;
  readonly amount: number;
}

describe.each(backends)('cabinet fiat tables on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  async function pay(owner: CabinetPerson, body: Record<string, unknown>): Promise<Payment> {
    const response = await postPayment(testApp, owner.apiKey, { currency: 'RUB', ...body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as Payment;
  }

  async function helper(owner: CabinetPerson, payment: Payment, action: 'pay' | 'fail' | 'expire') {
    expect((await postHelper(testApp, owner.apiKey, payment.payment_id, action)).statusCode).toBe(200);
  }

  async function signedIn(person: CabinetPerson): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    return client;
  }

  async function member(owner: CabinetPerson, role: Role): Promise<CabinetClient> {
    return signedIn(await addMember(testApp, owner, role));
  }

  describe('payments', () => {
    it('each filter narrows the table: status, days, amount range and search by payment id or order_id', async () => {
      testApp.clock.set(new Date('2026-11-01T10:00:00.000Z'));
      const owner = await createOwner(testApp);
      const first = await pay(owner, { amount: 100, order_id: 'A-1' });
      await helper(owner, first, 'pay');
      testApp.clock.set(new Date('2026-11-02T10:00:00.000Z'));
      const second = await pay(owner, { amount: 250.5, order_id: 'A-2' });
      await helper(owner, second, 'fail');
      testApp.clock.set(new Date('2026-11-03T10:00:00.000Z'));
      const third = await pay(owner, { amount: 999, order_id: 'B-3' });
      const client = await signedIn(owner);
      const base = `/cabinet/shops/${owner.shopId}/payments`;
      const ids = async (query: string) => {
        const page = await client.get(`${base}${query}`, EN);
        expect(page.statusCode, page.body.slice(0, 500)).toBe(200);
        return linkedIds(page.body, 'payments');
      };

      expect(await ids('')).toEqual([third.payment_id, second.payment_id, first.payment_id]);
      expect(await ids('?status=paid')).toEqual([first.payment_id]);
      expect(await ids('?status=failed')).toEqual([second.payment_id]);
      expect(await ids('?from=2026-11-02&to=2026-11-02')).toEqual([second.payment_id]);
      expect(await ids('?from=2026-11-02')).toEqual([third.payment_id, second.payment_id]);
      expect(await ids('?to=2026-11-01')).toEqual([first.payment_id]);
      expect(await ids('?amount_min=200&amount_max=300')).toEqual([second.payment_id]);
      expect(await ids('?amount_min=250.51')).toEqual([third.payment_id]);
      expect(await ids('?q=B-3')).toEqual([third.payment_id]);
      expect(await ids(`?q=${first.payment_id.toUpperCase()}`)).toEqual([first.payment_id]);
      expect(await ids('?q=A')).toEqual([]);
      expect(await ids('?status=paid&q=A-2')).toEqual([]);
      const shown = await client.get(`${base}?q=A-2`, EN);
      expect(shown.body).toContain('250.50');
      expect(shown.body).toContain('A-2');
    });

    it('a bad filter is a 400 with the form still shown, and nothing is listed', async () => {
      const owner = await createOwner(testApp);
      await pay(owner, { amount: 100, order_id: 'shown-only-when-valid' });
      const client = await signedIn(owner);
      const base = `/cabinet/shops/${owner.shopId}/payments`;
      for (const query of [
        '?status=refunded',
        '?from=2026-13-01',
        '?from=2026-11-05&to=2026-11-01',
        '?amount_min=abc',
        '?amount_min=1.001',
        '?amount_min=300&amount_max=200',
        `?q=${'x'.repeat(201)}`,
        '?cursor=not-a-cursor',
      ]) {
        const page = await client.get(`${base}${query}`, EN);
        expect(page.statusCode, query).toBe(400);
        expect(page.body, query).toContain('class="card listing-filters"');
        expect(page.body, query).not.toContain('shown-only-when-valid');
      }
    });

    it('the second page continues after the first through the cursor, with nothing twice', async () => {
      const owner = await createOwner(testApp);
      const created: string[] = [];
      for (let index = 0; index < 53; index++) {
        testApp.clock.advance(1000);
        created.push((await pay(owner, { amount: 100 + index, order_id: `page-${index}` })).payment_id);
      }
      const client = await signedIn(owner);
      const first = await client.get(`/cabinet/shops/${owner.shopId}/payments?amount_min=101`, EN);
      const firstIds = linkedIds(first.body, 'payments');
      expect(firstIds).toEqual(created.slice(1).reverse().slice(0, 50));
      const next = nextPageLink(first.body);
      expect(next).toContain('amount_min=101');
      const second = await client.get(next!, EN);
      expect(linkedIds(second.body, 'payments')).toEqual(created.slice(1, 3).reverse());
      expect(nextPageLink(second.body)).toBeUndefined();
    });

    it("a payment's page: facts and a timeline of its attempts, payment, ledger transfer and webhook", async () => {
      const owner = await createOwner(testApp);
      const payment = await pay(owner, { amount: 1500.5, method: 'card', order_id: 'ORD-77', callback_url: HOOK });
      await payOnPage(testApp, payment.order_code, [DECLINE_CARD, SUCCESS_CARD]);
      const client = await signedIn(owner);
      const page = await client.get(`/cabinet/shops/${owner.shopId}/payments/${payment.payment_id}`, EN);
      expect(page.statusCode).toBe(200);
      const body = page.body;
      expect(body).toContain('<dd id="payment-order-id">ORD-77</dd>');
      expect(body).toContain('data-status="paid"');
      expect(body).toContain('1500.50');
      expect(body).toContain('Payment created');
      expect(body).toContain('Payment attempt: card · 1500.50 RUB — <span data-attempt-status="declined">declined');
      expect(body).toMatch(/decline code <code>card_declined<\/code>/);
      expect(body).toContain('<span data-attempt-status="succeeded">succeeded</span>');
      expect(body).toContain('Paid <div class="muted">card · 1500.50 RUB</div>');
      expect(body).toContain('Ledger transfer: payment · 1500.50 RUB · posted');
      const event =
        /Webhook: <a href="(\/cabinet\/shops\/[^"]+\/webhooks\/events\/(evt_[^"]+))">payment\.paid<\/a> · pending/.exec(
          body,
        );
      expect(event, body).not.toBeNull();
      // Oldest first: created, the declined attempt, the good one, paid.
      const order = [
        'Payment created',
        'data-attempt-status="declined"',
        'data-attempt-status="succeeded"',
        'Paid <div',
      ];
      const positions = order.map((mark) => body.indexOf(mark));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      // The event's page links back to the payment it is about.
      const eventPage = await client.get(event![1]!, EN);
      expect(eventPage.statusCode).toBe(200);
      expect(eventPage.body).toContain(`/cabinet/shops/${owner.shopId}/payments/${payment.payment_id}"`);
    });

    it("a payment's page lists the merchant's refunds of it on the timeline, with payment.refunded", async () => {
      const owner = await createOwner(testApp);
      const payment = await pay(owner, { amount: 1000, method: 'card', callback_url: HOOK });
      await payOnPage(testApp, payment.order_code, [SUCCESS_CARD]);
      testApp.clock.advance(1000);
      const refunded = await testApp.app.inject({
        method: 'POST',
        url: `/v1/payments/${payment.payment_id}/refunds`,
        headers: { authorization: `Bearer ${owner.apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount: 250.5 }),
      });
      expect(refunded.statusCode, refunded.body).toBe(201);
      const client = await signedIn(owner);
      const body = (await client.get(`/cabinet/shops/${owner.shopId}/payments/${payment.payment_id}`, EN)).body;
      expect(body).toContain('Refund to the payer: 250.50 RUB — <span data-refund-status="succeeded">succeeded</span>');
      expect(body).toContain(`<code>${refunded.json().refund_id}</code>`);
      expect(body).toMatch(/Webhook: <a href="[^"]+">payment\.refunded<\/a>/);
      expect(body).toContain('Ledger transfer: refund · 250.50 RUB · posted');
      expect(body.indexOf('Paid <div')).toBeLessThan(body.indexOf('data-refund-status'));
    });

    it("another merchant's payment, an unknown id and an id of the wrong form are 404, never 500", async () => {
      const owner = await createOwner(testApp);
      const stranger = await createOwner(testApp);
      const theirs = await pay(stranger, { amount: 100 });
      const client = await signedIn(owner);
      const base = `/cabinet/shops/${owner.shopId}/payments`;
      for (const id of [
        theirs.payment_id,
        '00000000-0000-4000-8000-000000000000',
        'not-a-uuid',
        '%3Cscript%3E',
        'x'.repeat(90),
      ])
        expect((await client.get(`${base}/${id}`, EN)).statusCode, id).toBe(404);
      // Nor through the other shop's path.
      expect((await client.get(`/cabinet/shops/${stranger.shopId}/payments/${theirs.payment_id}`)).statusCode).toBe(
        404,
      );
      expect((await client.get(`/cabinet/shops/${stranger.shopId}/payments`)).statusCode).toBe(404);
    });

    it('the CSV of the table filtered by status=paid equals GET /v1/payments?status=paid: ids in the same order, amounts equal', async () => {
      const owner = await createOwner(testApp);
      const payments: Payment[] = [];
      for (let index = 0; index < 7; index++) {
        testApp.clock.advance(60_000);
        const payment = await pay(owner, { amount: 100.25 + index * 11, order_id: `csv-${index}` });
        if (index % 3 !== 1) await helper(owner, payment, index % 3 === 0 ? 'pay' : 'fail');
        payments.push(payment);
      }
      await helper(owner, payments[1]!, 'pay');
      const client = await signedIn(owner);
      const csv = await client.get(`/cabinet/shops/${owner.shopId}/payments.csv?status=paid`);
      expect(csv.statusCode).toBe(200);
      expect(csv.headers['content-type']).toContain('text/csv');
      const rows = csvRecords(csv.body);
      const api = (await getJson(testApp, owner.apiKey, '/v1/payments?status=paid&limit=100')).json() as {
        data: Array<{ payment_id: string; amount: number; amount_total: number; order_id: string }>;
      };
      expect(api.data.length).toBe(4);
      expect(rows.map((row) => row.payment_id)).toEqual(api.data.map((payment) => payment.payment_id));
      expect(rows.map((row) => Number(row.amount))).toEqual(api.data.map((payment) => payment.amount));
      expect(rows.map((row) => Number(row.amount_total))).toEqual(api.data.map((payment) => payment.amount_total));
      expect(rows.map((row) => row.order_id)).toEqual(api.data.map((payment) => payment.order_id));
      expect(rows.every((row) => row.status === 'paid')).toBe(true);
      // A choice of columns, in the table's order.
      const chosen = await client.get(
        `/cabinet/shops/${owner.shopId}/payments.csv?status=paid&columns=amount,payment_id`,
      );
      expect(chosen.body.split('\r\n')[0]).toBe('payment_id,amount');
    });

    it('order_ids a spreadsheet would run as formulas export as text, starting with a quote', async () => {
      const owner = await createOwner(testApp);
      const probes = ['=HYPERLINK("http://evil")', '+1', '-2+3', '@SUM(A1)'];
      for (const orderId of probes) await pay(owner, { amount: 100, order_id: orderId });
      const client = await signedIn(owner);
      const csv = await client.get(`/cabinet/shops/${owner.shopId}/payments.csv?columns=order_id,amount`);
      const rows = csvRecords(csv.body);
      expect(rows.map((row) => row.order_id).sort()).toEqual(probes.map((probe) => `'${probe}`).sort());
      expect(rows.every((row) => row.amount === '100.00')).toBe(true);
    });
  });

  describe('balance operations', () => {
    it('lists the book of the shop: type and days narrow it, rows link to their object, a debit stays a number in the CSV', async () => {
      testApp.clock.set(new Date('2026-11-10T10:00:00.000Z'));
      const owner = await createOwner(testApp);
      const payment = await pay(owner, { amount: 500 });
      await helper(owner, payment, 'pay');
      testApp.clock.set(new Date('2026-11-11T10:00:00.000Z'));
      const balances = (await getJson(testApp, owner.apiKey, '/v1/crypto/balance')).json() as {
        accounts: Array<{ account_id: string; currency: string; kind: string }>;
      };
      const account = (kind: string) =>
        balances.accounts.find((entry) => entry.currency === 'RUB' && entry.kind === kind)!.account_id;
      const moved = await testApp.app.inject({
        method: 'POST',
        url: '/v1/crypto/balance/transfers',
        headers: { authorization: `Bearer ${owner.apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          external_id: 'move-1',
          from_account_id: account('main'),
          to_account_id: account('payout'),
          amount: '120.00',
        }),
      });
      expect(moved.statusCode, moved.body).toBe(201);
      const client = await signedIn(owner);
      const base = `/cabinet/shops/${owner.shopId}/operations`;

      const all = await client.get(base, EN);
      expect(all.statusCode).toBe(200);
      expect(linkedIds(all.body, 'payments')).toEqual([payment.payment_id]);
      expect(all.body).toContain('-120.00');
      const payments = await client.get(`${base}?status=payment`, EN);
      expect(payments.body).toContain('500.00');
      expect(payments.body).not.toContain('120.00');
      const transfers = await client.get(`${base}?status=transfer&from=2026-11-11`, EN);
      expect(transfers.body).toContain('-120.00');
      expect(transfers.body).not.toContain('500.00');
      expect(linkedIds((await client.get(`${base}?to=2026-11-10`, EN)).body, 'payments')).toEqual([payment.payment_id]);
      expect((await client.get(`${base}?from=2026-11-12`, EN)).body).toContain('Nothing found.');
      expect((await client.get(`${base}?status=bogus`, EN)).statusCode).toBe(400);
      expect((await client.get(`${base}?amount_min=1`, EN)).statusCode).toBe(400);
      expect((await client.get(`${base}?q=anything`, EN)).statusCode).toBe(400);

      const csv = csvRecords((await client.get(`${base}.csv?status=transfer`)).body);
      const api = (
        await getJson(testApp, owner.apiKey, '/v1/crypto/balance/operations?type=transfer&limit=100')
      ).json() as { data: Array<{ operation_id: string; amount: string }> };
      expect(csv.map((row) => row.operation_id)).toEqual(api.data.map((operation) => operation.operation_id));
      expect(csv.map((row) => row.amount)).toEqual(api.data.map((operation) => operation.amount));
      expect(csv.map((row) => row.amount)).toContain('-120.00');
    });

    it('the second page continues through the ledger cursor', async () => {
      const owner = await createOwner(testApp);
      const created: string[] = [];
      for (let index = 0; index < 52; index++) {
        testApp.clock.advance(1000);
        const payment = await pay(owner, { amount: 100 + index });
        await helper(owner, payment, 'pay');
        created.push(payment.payment_id);
      }
      const client = await signedIn(owner);
      const first = await client.get(`/cabinet/shops/${owner.shopId}/operations?status=payment`, EN);
      const firstIds = linkedIds(first.body, 'payments');
      expect(firstIds).toEqual(created.slice(-50).reverse());
      const second = await client.get(nextPageLink(first.body)!, EN);
      expect(linkedIds(second.body, 'payments')).toEqual(created.slice(0, 2).reverse());
    });
  });

  describe('webhook events', () => {
    it('delivery status, days and a search by type, event id or object narrow the events', async () => {
      testApp.clock.set(new Date('2026-11-20T10:00:00.000Z'));
      const owner = await createOwner(testApp);
      const paid = await pay(owner, { amount: 100, callback_url: HOOK });
      await helper(owner, paid, 'pay');
      testApp.clock.set(new Date('2026-11-21T10:00:00.000Z'));
      const failed = await pay(owner, { amount: 200, callback_url: HOOK });
      await helper(owner, failed, 'fail');
      const events = await testApp.context.db
        .selectFrom('webhook_events')
        .select(['id', 'type'])
        .where('shop_id', '=', owner.shopId)
        .orderBy('created_at')
        .execute();
      expect(events.map((event) => event.type)).toEqual(['payment.paid', 'payment.failed']);
      const [paidEvent, failedEvent] = events;
      // One delivery has gone through (as the delivery worker would leave it).
      await testApp.context.db
        .updateTable('webhook_deliveries')
        .set({ status: 'delivered', next_attempt_at: null, attempt_count: 1, last_attempt_at: testApp.clock.now() })
        .where('event_id', '=', paidEvent!.id)
        .execute();
      const client = await signedIn(owner);
      const base = `/cabinet/shops/${owner.shopId}/webhooks/events`;
      const ids = async (query: string) => {
        const page = await client.get(`${base}${query}`, EN);
        expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
        return linkedIds(page.body, 'webhooks/events');
      };
      expect(await ids('')).toEqual([failedEvent!.id, paidEvent!.id]);
      expect(await ids('?status=delivered')).toEqual([paidEvent!.id]);
      expect(await ids('?status=pending')).toEqual([failedEvent!.id]);
      expect(await ids('?status=no_destination')).toEqual([]);
      expect(await ids('?from=2026-11-21')).toEqual([failedEvent!.id]);
      expect(await ids('?q=payment.paid')).toEqual([paidEvent!.id]);
      expect(await ids(`?q=${failedEvent!.id}`)).toEqual([failedEvent!.id]);
      expect(await ids(`?q=${paid.payment_id}`)).toEqual([paidEvent!.id]);
      expect((await client.get(`${base}?status=sent`, EN)).statusCode).toBe(400);
      const csv = csvRecords((await client.get(`${base}.csv?status=pending`)).body);
      expect(csv.map((row) => [row.event_id, row.type, row.status])).toEqual([
        [failedEvent!.id, 'payment.failed', 'pending'],
      ]);
      // The webhooks page links to the table; the event page links to the payment.
      expect((await client.get(`/cabinet/shops/${owner.shopId}/webhooks`, EN)).body).toContain(`href="${base}"`);
      const eventPage = await client.get(`${base}/${failedEvent!.id}`, EN);
      expect(eventPage.body).toContain(`href="/cabinet/shops/${owner.shopId}/payments/${failed.payment_id}"`);
    });
  });

  describe('who may open the tables', () => {
    it('viewers read payments, operations and events but download nothing; developers see no balances; finance no webhooks', async () => {
      const owner = await createOwner(testApp);
      const shop = `/cabinet/shops/${owner.shopId}`;
      const viewer = await member(owner, 'viewer');
      for (const path of ['payments', 'operations', 'webhooks/events'])
        expect((await viewer.get(`${shop}/${path}`)).statusCode, path).toBe(200);
      for (const path of ['payments.csv', 'operations.csv', 'webhooks/events.csv'])
        expect((await viewer.get(`${shop}/${path}`)).statusCode, path).toBe(403);
      expect((await viewer.get(`${shop}/payments`)).body).not.toContain('listing-export');
      const developer = await member(owner, 'developer');
      expect((await developer.get(`${shop}/payments`)).statusCode).toBe(200);
      expect((await developer.get(`${shop}/operations`)).statusCode).toBe(403);
      const finance = await member(owner, 'finance');
      expect((await finance.get(`${shop}/webhooks/events`)).statusCode).toBe(403);
      expect((await finance.get(`${shop}/operations.csv`)).statusCode).toBe(200);
      expect((await finance.get(`${shop}/payments.csv`)).statusCode).toBe(200);
    });
  });
});
