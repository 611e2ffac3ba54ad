// An object's page shows the webhooks it caused and its ledger transfers: the
// events are found by the ids their data names (a generated column, whichever
// way the event was written), the transfers by their reference.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transfersAbout } from '../../src/ledger/ledger-history.ts';
import { eventsAbout } from '../../src/webhooks/webhook-service.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { postHelper, postPayment, sandboxShop } from '../payments/payment-test-support.ts';

describe.each(backends)('events and transfers about an object on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  it('a paid payment: its payment.paid event and its credit, and nothing of another payment', async () => {
    const shop = await sandboxShop(testApp);
    const body = { amount: 150.25, currency: 'RUB', callback_url: 'https://merchant.example/hooks' };
    const paid = (await postPayment(testApp, shop.key, body)).json().payment_id as string;
    const other = (await postPayment(testApp, shop.key, body)).json().payment_id as string;
    expect((await postHelper(testApp, shop.key, paid, 'pay')).statusCode).toBe(200);
    expect((await postHelper(testApp, shop.key, other, 'fail')).statusCode).toBe(200);

    const events = await eventsAbout(testApp.context, shop.shopId, paid);
    expect(events.map((event) => event.type)).toEqual(['payment.paid']);
    expect(await eventsAbout(testApp.context, shop.shopId, other)).toHaveLength(1);
    // Another shop never sees them.
    const stranger = await sandboxShop(testApp);
    expect(await eventsAbout(testApp.context, stranger.shopId, paid)).toEqual([]);

    const transfers = await transfersAbout(testApp.context.db, 'payment', paid);
    expect(transfers.length).toBeGreaterThan(0);
    expect(transfers.every((transfer) => transfer.currency === 'RUB')).toBe(true);
    expect(transfers.some((transfer) => transfer.amount === 15_025n)).toBe(true);
    expect(await transfersAbout(testApp.context.db, 'payment', other)).toEqual([]);
  });
});
