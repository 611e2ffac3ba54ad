// emitMany writes a batch's payloads as one json array split by json_array_elements:
// each stored payload must be exactly the text JSON.stringify made (signatures cover
// it), in the order given, whatever the strings hold — quotes, backslashes, NUL,
// astral characters, and lone surrogates, which JSON.stringify escapes as \udXXX.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { emitMany } from '../../src/webhooks/outbox.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

const AWKWARD = [
  'plain',
  'a "quoted" \\ back\\slash',
  'nul \u0000 inside',
  'astral 😀',
  'lone \ud800 high',
  'lone \udc00 low',
  '{"looks":"like json"}',
  '',
];

describe.each(backends)('emitMany on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(async () => {
    await testApp.close();
  });

  it('stores every payload exactly as stringified, in order, each with its delivery', async () => {
    const merchant = await testApp.createMerchant();
    const url = 'http://127.0.0.1:9/hook';
    await inTransaction(testApp.context.db, (tx) =>
      emitMany(
        tx,
        testApp.clock,
        AWKWARD.map((text, index) => ({
          shopId: merchant.shop_id,
          type: 'payment.paid',
          data: { index, text },
          destination: url,
        })),
      ),
    );
    const events = await testApp.context.db
      .selectFrom('webhook_events')
      .select(['id', 'payload', 'created_at', 'destination_url'])
      .where('shop_id', '=', merchant.shop_id)
      .orderBy('id')
      .execute();
    expect(events).toHaveLength(AWKWARD.length);
    const at = testApp.clock.now().toISOString();
    events.forEach((event, index) => {
      expect(event.payload).toBe(
        JSON.stringify({ id: event.id, type: 'payment.paid', created_at: at, data: { index, text: AWKWARD[index] } }),
      );
      expect(event.created_at.toISOString()).toBe(at);
      expect(event.destination_url).toBe(url);
    });
    const deliveries = await testApp.context.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'url', 'next_attempt_at', 'max_attempts'])
      .where('shop_id', '=', merchant.shop_id)
      .orderBy('event_id')
      .execute();
    expect(deliveries.map((delivery) => delivery.event_id)).toEqual(events.map((event) => event.id));
    for (const delivery of deliveries) {
      expect(delivery.url).toBe(url);
      expect(delivery.next_attempt_at?.toISOString()).toBe(at);
      expect(delivery.max_attempts).toBeGreaterThan(0);
    }
  });
});
