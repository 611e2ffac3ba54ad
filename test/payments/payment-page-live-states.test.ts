// The payer page's live states over the real HTTP stack and the loopback
// acquirer: the status JSON its script polls (shape, 404, no-store, no
// acquirer call per poll, the per-IP limit) and the waiting views that poll it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveConnection } from '../../src/payments/connectors/acquirer-connections.ts';
import type { KyselyPlugin } from 'kysely';
import { loadPayerStatus, payerStageOf } from '../../src/payments/page/payment-page-service.ts';
import { backends } from '../support/databases.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { loopbackProvider, startLoopbackAcquirer, type LoopbackAcquirer } from './loopback-acquirer.ts';
import { postPayment, sandboxShop, type ShopWithKey } from './payment-test-support.ts';

const providers = new Map([[loopbackProvider.name, loopbackProvider]]);
const SECRET = 'notify-secret-states';

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

describe('the payer stage of a pending payment', () => {
  it('follows its newest attempt', () => {
    expect(payerStageOf(undefined)).toBe('open');
    expect(payerStageOf({ status: 'abandoned' })).toBe('open');
    expect(payerStageOf({ status: 'requires_action' })).toBe('payer_action');
    expect(payerStageOf({ status: 'requires_confirmation' })).toBe('payer_action');
    expect(payerStageOf({ status: 'pending' })).toBe('processing');
    expect(payerStageOf({ status: 'declined' })).toBe('declined');
  });
});

describe.each(backends)('payer page live states on %s', (backend) => {
  let testApp: TestApp;
  let acquirer: LoopbackAcquirer;
  let live: ShopWithKey;
  let connectionId: string;

  beforeAll(async () => {
    acquirer = await startLoopbackAcquirer();
    testApp = await createTestApp(backend, { acquirerProviders: providers });
    live = await sandboxShop(testApp, 'live');
    connectionId = (
      await saveConnection(testApp.context, providers, {
        shopId: live.shopId,
        provider: 'loopback',
        apiUrl: acquirer.url,
        credentials: { api_key: acquirer.apiKey, notify_secret: SECRET },
      })
    ).id;
  });
  afterAll(async () => {
    await testApp.close();
    await acquirer.close();
  });

  function get(url: string, remoteAddress = '127.0.0.1') {
    return testApp.app.inject({ method: 'GET', url, remoteAddress });
  }

  function pollStatus(orderCode: string, remoteAddress?: string) {
    return get(`/pay/${orderCode}/status`, remoteAddress);
  }

  async function newPayment(method: 'card' | 'sbp') {
    return (await postPayment(testApp, live.key, { amount: 90, currency: 'RUB', method })).json() as {
      payment_id: string;
      order_code: string;
    };
  }

  /** Opens the page and submits its one form, as the payer's browser would; answers the acquirer's charge id. */
  async function startCharge(orderCode: string, action: 'card' | 'qr'): Promise<string> {
    const page = await get(`/pay/${orderCode}?lang=en`);
    const submitted = await testApp.app.inject({
      method: 'POST',
      url: `/pay/${orderCode}/${action}`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: String(page.headers['set-cookie']).split(';')[0]!,
      },
      payload: new URLSearchParams({
        csrf: field(page.body, 'csrf')!,
        attempt: field(page.body, 'attempt')!,
        lang: 'en',
        ...(action === 'qr' ? { method: 'sbp' } : {}),
      }).toString(),
    });
    expect(submitted.statusCode).toBe(303);
    return [...acquirer.charges.values()].at(-1)!.id;
  }

  function notify(chargeId: string) {
    return testApp.app.inject({
      method: 'POST',
      url: `/acquirers/loopback/notifications/${connectionId}`,
      headers: { 'content-type': 'application/json', 'x-loopback-secret': SECRET },
      payload: JSON.stringify({ charge_id: chargeId }),
    });
  }

  it('the status JSON has the status and stage only, is never cached, and follows the payment to paid', async () => {
    const payment = await newPayment('card');
    const fresh = await pollStatus(payment.order_code);
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['content-type']).toMatch(/^application\/json/);
    expect(fresh.headers['cache-control']).toBe('no-store');
    expect(fresh.headers['x-content-type-options']).toBe('nosniff');
    expect(fresh.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(fresh.headers['access-control-allow-origin']).toBeUndefined();
    expect(fresh.json()).toEqual({ status: 'pending', stage: 'open' });

    const chargeId = await startCharge(payment.order_code, 'card');
    expect((await pollStatus(payment.order_code)).json()).toEqual({ status: 'pending', stage: 'payer_action' });
    acquirer.settle(chargeId, 'succeeded');
    expect((await notify(chargeId)).statusCode).toBe(200);
    const paid = await pollStatus(payment.order_code);
    expect(paid.json()).toEqual({ status: 'paid', stage: null });
    expect(paid.headers['cache-control']).toBe('no-store');
  });

  it('a decline at the acquirer is the declined stage: the page shows it with the form to try again', async () => {
    const payment = await newPayment('card');
    const chargeId = await startCharge(payment.order_code, 'card');
    acquirer.settle(chargeId, 'declined');
    await notify(chargeId);
    expect((await pollStatus(payment.order_code)).json()).toEqual({ status: 'pending', stage: 'declined' });
    const page = await get(`/pay/${payment.order_code}?lang=en`);
    expect(page.body).toContain('data-status="declinedAtBank"');
    expect(page.body).toContain('The bank declined the payment');
    expect(page.body).toContain('id="card-form"');
    // Nothing to wait for: no poll, and the CSP lets the page fetch nothing.
    expect(page.body).not.toContain('/status');
    expect(page.headers['content-security-policy']).not.toContain('connect-src');
  });

  it('an unknown or malformed order code is 404 in the API error shape, not a page', async () => {
    for (const code of ['Zz9Zz9Zz9Zz9', 'x', 'a'.repeat(40), '%3Cscript%3E']) {
      const response = await pollStatus(code);
      expect(response.statusCode, code).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.json()).toEqual({ error: 'not_found', message: 'No payment has this order code.' });
    }
  });

  it('polling never calls the acquirer, however long the payer waits', async () => {
    const payment = await newPayment('card');
    await startCharge(payment.order_code, 'card');
    const callsBefore = acquirer.requests.length;
    for (let poll = 0; poll < 5; poll++) {
      testApp.clock.advance(11_000); // past the return page's look-up interval each time
      expect((await pollStatus(payment.order_code)).json()).toEqual({ status: 'pending', stage: 'payer_action' });
    }
    expect(acquirer.requests.slice(callsBefore)).toEqual([]);
    // The return page, by contrast, asks once.
    await get(`/pay/${payment.order_code}/return?lang=en`);
    expect(acquirer.requests.slice(callsBefore)).toHaveLength(1);
  });

  it('the poll shares the page limit per IP: over it, 429 in the API error shape with Retry-After', async () => {
    const payment = await newPayment('card');
    const address = '198.51.100.77';
    const answers: number[] = [];
    for (let poll = 0; poll < 301; poll++) answers.push((await pollStatus(payment.order_code, address)).statusCode);
    expect(answers.slice(0, 300).every((status) => status === 200)).toBe(true);
    const refused = await pollStatus(payment.order_code, address);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.json()).toMatchObject({ error: 'rate_limited', message: expect.any(String) });
    // Another address is not held back.
    expect((await pollStatus(payment.order_code, '198.51.100.78')).statusCode).toBe(200);
  });

  it('back from the acquirer before its answer: the waiting view polls, with a no-script refresh and a link to ask again', async () => {
    const payment = await newPayment('card');
    const chargeId = await startCharge(payment.order_code, 'card');
    const back = await get(`/pay/${payment.order_code}/return?lang=en`);
    expect(back.headers.location).toBe(`/pay/${payment.order_code}?lang=en&returned=1`);
    const page = await get(back.headers.location!);
    expect(page.body).toContain('data-status="waiting_for_bank"');
    expect(page.body).toContain('the bank has not confirmed the payment yet');
    expect(page.body).toContain(`href="${acquirer.url}/page/${chargeId}"`); // back to the bank's page
    expect(page.body).toContain(`id="check-again"`);
    expect(page.body).toContain(
      `<noscript><meta http-equiv="refresh" content="15;url=/pay/${payment.order_code}/return?lang=en"></noscript>`,
    );
    expect(page.body).not.toContain('id="card-form"');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("connect-src 'self'");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    const script = new RegExp(`<script nonce="${nonce}">([\\s\\S]*?)</script>`).exec(page.body)?.[1];
    expect(script).toContain(`"/pay/${payment.order_code}/status"`);
    expect(script).toContain('{"status":"pending","stage":"payer_action"}');
    expect(script).toContain(`"/pay/${payment.order_code}?lang=en"`);
    // Opened afresh (not back from the bank), the same payment offers its pay button again.
    expect((await get(`/pay/${payment.order_code}?lang=en`)).body).toContain('id="card-form"');
  });

  it('a live SBP charge shows its QR with the bank-app link first on phones, and polls', async () => {
    const payment = await newPayment('sbp');
    const chargeId = await startCharge(payment.order_code, 'qr');
    const page = await get(`/pay/${payment.order_code}?lang=ru`);
    expect(page.body).toContain('data-status="waiting_for_payer"');
    expect(page.body).toContain('Ждём оплату в приложении банка');
    expect(page.body).toMatch(/class="card qr-step"[\s\S]*<svg[\s\S]*id="open-bank-app" href="bank:\/\/pay\//);
    expect(page.body).toContain(`href="bank://pay/${chargeId}"`);
    expect(page.body).toContain('Открыть в приложении банка');
    expect(page.body).toContain('{"status":"pending","stage":"payer_action"}');
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
  });
  // On PostgreSQL the page's reads and the notification's transaction run on separate
  // connections; PGlite has one, so the notification cannot commit inside the page's read.
  it.runIf(backend === 'postgres')(
    'a charge that succeeds while the page reads the payment is seen whole: still waiting, then paid; never pending with nothing under way',
    async () => {
      const payment = await newPayment('card');
      const chargeId = await startCharge(payment.order_code, 'card');
      acquirer.settle(chargeId, 'succeeded');
      let notified = false;
      // Right after the page's first read returns, the acquirer's notification is applied and committed.
      const notifyAfterFirstRead: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          if (!notified) {
            notified = true;
            expect((await notify(chargeId)).statusCode).toBe(200);
          }
          return args.result;
        },
      };
      const db = testApp.context.db.withPlugin(notifyAfterFirstRead);
      const seen = await loadPayerStatus({ db, clock: testApp.clock }, payment.order_code);
      expect(notified).toBe(true);
      // The snapshot of the first read: still waiting on the payer at the acquirer.
      expect(seen).toEqual({ status: 'pending', stage: 'payer_action' });
      expect((await pollStatus(payment.order_code)).json()).toEqual({ status: 'paid', stage: null });
    },
  );
  // Last: it moves the clock past every payment's expiry.
  it('a payment past expires_at reads as expired before the worker runs', async () => {
    const payment = await newPayment('card');
    testApp.clock.advance(61 * 60_000);
    expect((await pollStatus(payment.order_code)).json()).toEqual({ status: 'expired', stage: null });
  });
});
