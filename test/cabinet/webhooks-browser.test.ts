// The cabinet's webhook pages in Chromium, with the real delivery workers and a
// real receiver: set the endpoint, resend a failed event from the log, rotate the
// secret and see the next delivery verify with the new one; every page checked
// by axe-core at phone and desktop widths.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Worker } from '../../src/context.ts';
import { createWorkers } from '../../src/modules.ts';
import { backends } from '../support/databases.ts';
import { eventually } from '../support/eventually.ts';
import { expectPageHoldsUp } from '../support/page-checks.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { createOwner } from './cabinet-client.ts';
import {
  describeInBrowser,
  signInInBrowser,
  startCabinetInBrowser,
  type CabinetInBrowser,
} from './cabinet-browser-support.ts';

describeInBrowser.each(backends)('cabinet webhooks in Chromium on %s', (backend) => {
  let cabinet: CabinetInBrowser;
  let receiver: Receiver;
  let workers: Worker[];
  beforeAll(async () => {
    cabinet = await startCabinetInBrowser(backend);
    receiver = await startReceiver();
    workers = createWorkers(cabinet.testApp.modules);
    for (const worker of workers) worker.start();
  });
  afterAll(async () => {
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await receiver?.close();
    await cabinet?.close();
  });

  it('sets the endpoint, resends a failed event from the log, rotates the secret and the next delivery verifies with it', async () => {
    const owner = await createOwner(cabinet.testApp);
    const base = `/cabinet/shops/${owner.shopId}/webhooks`;
    const page = await cabinet.newPage();
    await signInInBrowser(page, owner.email);
    await page.goto(base);
    await expectPageHoldsUp(page, 'cabinet-webhooks-empty');
    await page.getByLabel('URL (https)').fill(receiver.url);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/endpoint=saved/);
    expect(await page.locator('#webhook-url').textContent()).toBe(receiver.url);

    // A test event the receiver refuses: failed, then resent from its page and delivered by the workers.
    receiver.handler = () => ({ status: 500, body: 'down for maintenance' });
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.waitForURL(/\/events\/evt_[^?]+\?test=http_error/);
    const eventUrl = page.url().split('?')[0]!;
    expect(await page.locator('[data-status]').getAttribute('data-status')).toBe('failed');
    await expectPageHoldsUp(page, 'cabinet-webhook-event');
    await page.goto(`${base}?status=failed`);
    await page.locator(`a[href="${new URL(eventUrl).pathname}"]`).click();
    receiver.handler = () => ({ status: 200, body: 'ok' });
    await page.getByRole('button', { name: 'Resend' }).click();
    await page.waitForURL(/resent=1/);
    await eventually(
      async () => {
        await page.reload();
        return page.locator('[data-status]').getAttribute('data-status');
      },
      (status) => status === 'delivered',
    );
    expect(await page.locator('tr[data-attempt]').count()).toBe(2);
    await page.goto(base);
    await expectPageHoldsUp(page, 'cabinet-webhooks-log');

    // Rotate: the new secret is shown once, and signs the next delivery.
    await page.getByRole('link', { name: 'Reveal or rotate the secret' }).click();
    await expectPageHoldsUp(page, 'cabinet-webhook-secret');
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    const secret = (await page.locator('#webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    expect(page.url()).not.toContain(secret);
    await expectPageHoldsUp(page, 'cabinet-webhook-secret-rotated');
    await page.getByRole('link', { name: 'Back to webhooks' }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.waitForURL(/\?test=succeeded/);
    const eventId = /\/events\/(evt_[^?]+)/.exec(page.url())![1]!;
    const delivered = receiver.requests.find((request) => request.body.includes(eventId))!;
    const event = new Webhook(secret).verify(delivered.body, delivered.headers as Record<string, string>) as {
      type: string;
    };
    expect(event.type).toBe('webhook.test');
  });
});
