// Webhook signing secrets are stored sealed (src/kms/) in webhook_endpoints: the database and the
// embedded database's files never hold one in clear, deliveries are still
// signed with the secret the merchant holds, secrets stored in clear by an
// earlier version are sealed at start, and a root key rotation re-wraps them.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openWebhookSecret,
  rewrapWebhookSecrets,
  sealPlaintextWebhookSecrets,
} from '../../src/webhooks/webhook-secrets.ts';
import { createKeyring, generateRootKey, rootKeyFromBase64 } from '../../src/kms/keyring.ts';
import { loadKeyring } from '../../src/kms/load-keyring.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { openConfiguredDatabase } from '../../src/runtime.ts';
import { createTestApp, testConfig, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { testKeyring } from '../support/keyring.ts';
import { startReceiver, type Receiver } from './receiver.ts';

describe.each(backends)('webhook secrets at rest on %s', (backend) => {
  let testApp: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await testApp?.close();
  });

  const storedSecrets = (shopId: string) =>
    testApp.context.db
      .selectFrom('webhook_endpoints')
      .select(['webhook_secret', 'previous_webhook_secret'])
      .where('shop_id', '=', shopId)
      .executeTakeFirstOrThrow();

  it('the shop row holds a sealed value, and a test send is signed with the secret the merchant was given', async () => {
    const merchant = await testApp.createMerchant();
    const stored = await storedSecrets(merchant.shop_id);
    expect(stored.webhook_secret).toMatch(/^v1\./);
    expect(stored.webhook_secret).not.toContain(merchant.webhook_secret.slice('whsec_'.length));
    testApp.clock.set(new Date());
    const sent = await testApp.app.inject({
      method: 'POST',
      url: '/v1/webhooks/test',
      headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: receiver.url }),
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const delivered = receiver.requests.at(-1)!;
    expect(() =>
      new Webhook(merchant.webhook_secret).verify(delivered.body, delivered.headers as Record<string, string>),
    ).not.toThrow();
  });

  it('a rotation stores the new secret sealed and keeps the old one sealed beside it', async () => {
    const merchant = await testApp.createMerchant();
    const rotated = await testApp.app.inject({
      method: 'POST',
      url: '/v1/webhooks/secret/rotate',
      headers: { authorization: `Bearer ${merchant.api_key}` },
    });
    expect(rotated.statusCode).toBe(200);
    const stored = await storedSecrets(merchant.shop_id);
    expect(openWebhookSecret(testKeyring, merchant.shop_id, stored.webhook_secret)).toBe(rotated.json().webhook_secret);
    expect(openWebhookSecret(testKeyring, merchant.shop_id, stored.previous_webhook_secret!)).toBe(
      merchant.webhook_secret,
    );
    // Bound to its shop: the sealed value does not open as another shop's secret.
    expect(() => openWebhookSecret(testKeyring, `${merchant.shop_id}x`, stored.webhook_secret)).toThrow(
      /does not open/,
    );
  });

  it('secrets an earlier version stored in clear are sealed at start; a second pass changes nothing', async () => {
    const merchant = await testApp.createMerchant();
    await testApp.context.db
      .updateTable('webhook_endpoints')
      .set({ webhook_secret: merchant.webhook_secret })
      .where('shop_id', '=', merchant.shop_id)
      .execute();
    expect(await sealPlaintextWebhookSecrets(testApp.context.db, testKeyring)).toBeGreaterThanOrEqual(1);
    const stored = await storedSecrets(merchant.shop_id);
    expect(stored.webhook_secret).toMatch(/^v1\./);
    expect(openWebhookSecret(testKeyring, merchant.shop_id, stored.webhook_secret)).toBe(merchant.webhook_secret);
    expect(await sealPlaintextWebhookSecrets(testApp.context.db, testKeyring)).toBe(0);
  });

  it('a root key rotation re-wraps every secret; then the old key is no longer needed', async () => {
    const oldKey = rootKeyFromBase64(generateRootKey(), 'old');
    const newKey = rootKeyFromBase64(generateRootKey(), 'new');
    const merchant = await createMerchant(
      { ...testApp.context, keyring: createKeyring(oldKey) },
      { name: 'Rotating shop', email: `rotate-${crypto.randomUUID()}@example.test` },
    );
    const during = createKeyring(newKey, [oldKey, ...[testKeyring.current]]);
    expect(await rewrapWebhookSecrets(testApp.context.db, during)).toBeGreaterThanOrEqual(1);
    const stored = await storedSecrets(merchant.shop_id);
    expect(openWebhookSecret(createKeyring(newKey), merchant.shop_id, stored.webhook_secret)).toBe(
      merchant.webhook_secret,
    );
    expect(() => openWebhookSecret(createKeyring(oldKey), merchant.shop_id, stored.webhook_secret)).toThrow(
      /not configured/,
    );
    expect(await rewrapWebhookSecrets(testApp.context.db, during)).toBe(0);
    // Put the other shops of this shared database back under the test key.
    await rewrapWebhookSecrets(testApp.context.db, createKeyring(testKeyring.current, [newKey, oldKey]));
  });
});

describe('the embedded database on disk', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'paygate-secrets-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('generates its root key in the data folder, and no file of the database holds a webhook secret in clear', async () => {
    const config = testConfig({ dataDir: folder, rootKey: undefined, rootKeyFile: undefined, databaseUrl: undefined });
    const keyring = await loadKeyring(config);
    expect((await readFile(join(folder, 'root-key'), 'utf8')).trim()).toHaveLength(44);
    expect((await loadKeyring(config)).current.id).toBe(keyring.current.id);
    const handle = await openConfiguredDatabase(config);
    let secret: string;
    try {
      const context = { db: handle.db, clock: { now: () => new Date() }, keyring };
      secret = (await createMerchant(context, { name: 'Disk shop', email: 'disk@example.test' })).webhook_secret;
    } finally {
      await handle.close();
    }
    const needle = Buffer.from(secret.slice('whsec_'.length));
    const files = (await readdir(join(folder, 'pglite'), { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isFile(),
    );
    expect(files.length).toBeGreaterThan(100);
    for (const file of files)
      expect((await readFile(join(file.parentPath, file.name))).includes(needle), file.name).toBe(false);
  });
});
