// The audit log end to end on the real app and database: its reads (filters,
// keyset pages, one merchant only), /cabinet/audit and /cabinet/audit.csv (who
// may open them, the GET form, RFC 4180 and the formula guard), the append-only
// trigger, and the events the operator's withdrawal commands and
// `paygate merchant create` record in the transaction of their change.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listAuditEvents,
  parseAuditFilter,
  recordAudit,
  type AuditActor,
  type AuditEventRow,
  type AuditFilterForm,
} from '../../src/audit/audit-service.ts';
import {
  approveWithdrawal,
  createWithdrawal,
  rejectWithdrawal,
  setWithdrawalApproval,
} from '../../src/crypto/withdrawals/withdrawal-service.ts';
import { openDatabase } from '../../src/db/database.ts';
import { AppError } from '../../src/errors.ts';
import type { CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from '../cabinet/cabinet-client.ts';
import { createPayoutTestApp, recipient, type PayoutTestApp } from '../crypto/payouts/payout-support.ts';
import { lastJsonLine, runPaygateInProcess } from '../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';

const USER: AuditActor = { kind: 'user', id: 'user_someone', label: 'someone@example.test', ip: '192.0.2.7' };

describe.each(backends)('the audit log on %s', (backend) => {
  let testApp: PayoutTestApp;
  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
  });
  afterAll(() => testApp?.close());

  const record = async (merchantId: string, action: string, more: Partial<Parameters<typeof recordAudit>[2]> = {}) => {
    testApp.clock.advance(1_000);
    await recordAudit(testApp.context.db, testApp.clock, { actor: USER, action, merchantId, ...more });
  };
  const actionsOf = async (merchantId: string, form: AuditFilterForm = {}, limit = 100): Promise<string[]> => {
    const page = await listAuditEvents(testApp.context.db, parseAuditFilter(merchantId, form), { limit });
    return page.data.map((event) => event.action);
  };
  const signedIn = async (person: CabinetPerson): Promise<CabinetClient> => {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    return client;
  };

  it('lists one merchant’s events newest first, filtered by exact or prefix action, actor, shop and UTC days', async () => {
    const merchant = await testApp.createMerchant();
    const other = await testApp.createMerchant();
    const id = merchant.merchant_id;
    testApp.clock.set(new Date('2026-11-10T23:59:00.000Z'));
    await record(id, 'team.invited', { target: 'a' });
    testApp.clock.set(new Date('2026-11-11T12:00:00.000Z'));
    await record(id, 'team.role_changed', { shopId: merchant.shop_id });
    await record(id, 'api_key.created', { actor: { kind: 'api_key', id: 'key_one', label: 'key_one' } });
    await record(id, 'withdrawal.requested', { actor: { kind: 'operator', label: 'cli:root' } });
    testApp.clock.set(new Date('2026-11-12T00:00:01.000Z'));
    await record(id, 'team_x.odd', { actor: { kind: 'system' } });
    await record(other.merchant_id, 'team.invited');

    expect(await actionsOf(id)).toEqual([
      'team_x.odd',
      'withdrawal.requested',
      'api_key.created',
      'team.role_changed',
      'team.invited',
    ]);
    expect(await actionsOf(id, { action: 'team.invited' })).toEqual(['team.invited']);
    expect(await actionsOf(id, { action: 'team.' })).toEqual(['team.role_changed', 'team.invited']);
    // `_` in a prefix is a letter, not LIKE's any-character.
    expect(await actionsOf(id, { action: 'team_*' })).toEqual(['team_x.odd']);
    expect(await actionsOf(id, { action: 'team' })).toEqual([]);
    expect(await actionsOf(id, { actor: 'operator' })).toEqual(['withdrawal.requested']);
    expect(await actionsOf(id, { actor: 'System' })).toEqual(['team_x.odd']);
    expect(await actionsOf(id, { actor: 'key_one' })).toEqual(['api_key.created']);
    expect(await actionsOf(id, { actor: 'SOMEONE@example.test' })).toEqual(['team.role_changed', 'team.invited']);
    expect(await actionsOf(id, { shop: merchant.shop_id })).toEqual(['team.role_changed']);
    expect(await actionsOf(id, { from: '2026-11-11', to: '2026-11-11' })).toEqual([
      'withdrawal.requested',
      'api_key.created',
      'team.role_changed',
    ]);
    expect(await actionsOf(id, { to: '2026-11-10' })).toEqual(['team.invited']);
    expect(await actionsOf(id, { from: '2026-11-12' })).toEqual(['team_x.odd']);
    expect(await actionsOf(other.merchant_id)).toEqual(['team.invited']);
    for (const bad of [{ from: '2026-02-30' }, { to: '11/12/2026' }, { from: '2026-11-12', to: '2026-11-11' }]) {
      expect(() => parseAuditFilter(id, bad)).toThrow(AppError);
    }
  });

  it('pages 120 events by cursor: each once, newest first, and a foreign cursor is refused', async () => {
    const merchant = await testApp.createMerchant();
    for (let index = 0; index < 120; index++) await record(merchant.merchant_id, `test.event_${index}`);
    const filter = parseAuditFilter(merchant.merchant_id, {});
    const seen: AuditEventRow[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listAuditEvents(testApp.context.db, filter, { limit: 50, cursor });
      seen.push(...page.data);
      cursor = page.next_cursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.map((event) => event.action)).toEqual(
      Array.from({ length: 120 }, (_, index) => `test.event_${119 - index}`),
    );
    const foreign = Buffer.from(`2026-11-01T00:00:00.000Z|wd_123`).toString('base64url');
    await expect(listAuditEvents(testApp.context.db, filter, { limit: 50, cursor: foreign })).rejects.toThrow(
      'cursor is not valid',
    );
  });

  it('finance, who may not read the webhook settings, sees a webhook change in the log without its URLs; an owner sees them', async () => {
    const owner = await createOwner(testApp);
    const finance = await addMember(testApp, owner, 'finance');
    const secretUrl = 'https://hooks.merchant.example/very-secret-path';
    await record(owner.merchantId, 'webhook.endpoint_changed', { details: { before: null, after: secretUrl } });
    const financeClient = await signedIn(finance);
    const financePage = await financeClient.get('/cabinet/audit?action=webhook.');
    expect(financePage.body).toContain('webhook.endpoint_changed');
    expect(financePage.body).not.toContain(secretUrl);
    expect((await financeClient.get('/cabinet/audit.csv?action=webhook.')).body).not.toContain(secretUrl);
    const ownerClient = await signedIn(owner);
    expect((await ownerClient.get('/cabinet/audit?action=webhook.')).body).toContain(secretUrl);
    expect((await ownerClient.get('/cabinet/audit.csv?action=webhook.')).body).toContain(secretUrl);
  });

  it('the page opens for owner, admin and finance; developer and viewer get 403 for the page and the CSV', async () => {
    const owner = await createOwner(testApp);
    for (const role of ['owner', 'admin', 'finance', 'developer', 'viewer'] as const) {
      const person = role === 'owner' ? owner : await addMember(testApp, owner, role);
      const client = await signedIn(person);
      const page = await client.get('/cabinet/audit');
      const csv = await client.get('/cabinet/audit.csv');
      const allowed = role === 'owner' || role === 'admin' || role === 'finance';
      expect(page.statusCode, role).toBe(allowed ? 200 : 403);
      expect(csv.statusCode, role).toBe(allowed ? 200 : 403);
      if (allowed) expect(page.body).toContain(person.email);
      else expect(page.body).not.toContain('user.signed_in');
    }
  });

  it('the page shows its own merchant’s sign-ins, filters by its GET form, pages with an Older link, and refuses bad filters with 400', async () => {
    const owner = await createOwner(testApp);
    const stranger = await createOwner(testApp);
    await record(stranger.merchantId, 'stranger.secret_action', { target: 'stranger-target' });
    const client = await signedIn(owner);
    await record(owner.merchantId, 'team.invited', { target: 'invited-person', details: { role: 'viewer' } });
    const page = await client.get('/cabinet/audit');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('user.signed_in');
    expect(page.body).toContain('invited-person');
    expect(page.body).toContain('role: viewer');
    expect(page.body).not.toContain('stranger');
    const foreignShop = await client.get(`/cabinet/audit?shop=${stranger.shopId}`);
    expect(foreignShop.body).not.toContain('stranger.secret_action');

    const filtered = await client.get('/cabinet/audit?action=team.&actor=&from=&to=');
    expect(filtered.body).toContain('invited-person');
    expect(filtered.body).not.toContain('<code>user.signed_in</code>');
    expect(filtered.body).toContain('href="/cabinet/audit.csv?action=team."');

    for (let index = 0; index < 55; index++) await record(owner.merchantId, 'bulk.event');
    const first = await client.get('/cabinet/audit?action=bulk.event');
    expect(first.body.match(/<code>bulk\.event<\/code>/g)).toHaveLength(50);
    const older = /href="(\/cabinet\/audit\?action=bulk\.event&amp;cursor=[^"]+)" rel="next"/.exec(first.body)?.[1];
    expect(older).toBeDefined();
    const second = await client.get(older!.replaceAll('&amp;', '&'));
    expect(second.body.match(/<code>bulk\.event<\/code>/g)).toHaveLength(5);
    expect(second.body).not.toContain('rel="next"');
    expect(second.body).toContain('href="/cabinet/audit?action=bulk.event"');

    const bad = await client.get('/cabinet/audit?from=2026-13-01&action=kept.value');
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('value="kept.value"');
    expect(bad.body).toContain('notice error');
  });

  it('the CSV has a header, RFC 4180 quoting, formula-guarded cells and the page’s filters, and the export is itself recorded', async () => {
    const owner = await createOwner(testApp);
    const stranger = await createOwner(testApp);
    await record(stranger.merchantId, 'csv.case', { target: 'stranger-row' });
    testApp.clock.set(new Date('2026-11-20T08:00:00.000Z'));
    await record(owner.merchantId, 'csv.case', {
      actor: { kind: 'user', id: 'user_x', label: '=HYPERLINK("http://evil.test","x")', userAgent: 'Agent, v1' },
      target: 'line one\nline two',
      details: { note: 'say "hi"' },
    });
    await record(owner.merchantId, 'csv.case', { actor: { kind: 'operator', label: '\tcmd' }, target: '-2+3' });
    await record(owner.merchantId, 'csv.case', { actor: { kind: 'operator', label: '+1' }, target: '@SUM(A1)' });
    await record(owner.merchantId, 'other.case', { target: 'filtered-out' });
    const client = await signedIn(owner);
    const csv = await client.get('/cabinet/audit.csv?action=csv.case');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(
      `attachment; filename="audit-${owner.merchantId}-${testApp.clock.now().toISOString().slice(0, 10)}.csv"`,
    );
    const lines = csv.body.split('\r\n');
    expect(lines[0]).toBe(
      'time_utc,actor_kind,actor_id,actor_label,action,shop_id,target,ip,user_agent,details,event_id',
    );
    expect(lines.at(-1)).toBe('');
    expect(csv.body).not.toContain('stranger-row');
    expect(csv.body).not.toContain('filtered-out');
    // Newest first; each record ends with CRLF; a line break inside a field stays inside its quotes.
    expect(lines[1]).toMatch(/^2026-11-20T08:00:03\.000Z,operator,,'\+1,csv\.case,,'@SUM\(A1\),,,\{\},aud_/);
    expect(lines[2]).toMatch(/^2026-11-20T08:00:02\.000Z,operator,,'\tcmd,csv\.case,,'-2\+3,,,\{\},aud_/);
    expect(lines[3]).toBe(
      `2026-11-20T08:00:01.000Z,user,user_x,"'=HYPERLINK(""http://evil.test"",""x"")",csv.case,,"line one\nline two",,"Agent, v1","{""note"":""say \\""hi\\""""}",${/aud_\w+$/.exec(lines[3]!)?.[0]}`,
    );
    expect(lines).toHaveLength(5);
    const exported = await actionsOf(owner.merchantId, { action: 'audit.exported' });
    expect(exported).toEqual(['audit.exported']);
    const bad = await client.get('/cabinet/audit.csv?to=yesterday');
    expect(bad.statusCode).toBe(400);
  });

  it('audit_events is append-only: the trigger refuses UPDATE and DELETE', async () => {
    const merchant = await testApp.createMerchant();
    await record(merchant.merchant_id, 'kept.forever');
    const { db } = testApp.context;
    await expect(
      sql`update audit_events set action = 'rewritten' where merchant_id = ${merchant.merchant_id}`.execute(db),
    ).rejects.toThrow('audit_events is append-only');
    await expect(sql`delete from audit_events where merchant_id = ${merchant.merchant_id}`.execute(db)).rejects.toThrow(
      'audit_events is append-only',
    );
    expect(await actionsOf(merchant.merchant_id)).toEqual(['kept.forever']);
  });

  it('withdrawal settings, request, approval and rejection record the operator by the name given, in their transactions', async () => {
    const shop = await testApp.payoutShop();
    await testApp.fund(shop, 100_000_000n);
    const deps = { ...testApp.context, chain: testApp.crypto.chain };
    await setWithdrawalApproval(deps, shop.shopId, true);
    const request = (externalId: string, amount = '5') =>
      createWithdrawal(deps, {
        merchantId: shop.merchantId,
        shopId: shop.shopId,
        externalId,
        amount,
        address: recipient(),
        requestedBy: 'cli:alice',
      });
    const first = await request('audit-1');
    const second = await request('audit-2');
    // A repeat of the same request is the same withdrawal: not a second event.
    await createWithdrawal(deps, {
      merchantId: shop.merchantId,
      shopId: shop.shopId,
      externalId: 'audit-1',
      amount: '5',
      address: first.recipient_address,
      requestedBy: 'cli:alice',
    });
    // Refused changes record nothing: too much money, the requester approving its own.
    await expect(request('audit-3', '1000')).rejects.toThrow();
    await expect(approveWithdrawal(testApp.context, first.withdrawal_id, 'cli:alice')).rejects.toThrow();
    await approveWithdrawal(testApp.context, first.withdrawal_id, 'cli:bob');
    await rejectWithdrawal(testApp.context, second.withdrawal_id, 'cli:carol', 'wrong address');

    const page = await listAuditEvents(
      testApp.context.db,
      parseAuditFilter(shop.merchantId, { action: 'withdrawal.' }),
      {
        limit: 10,
      },
    );
    expect(
      page.data.map((event) => ({
        action: event.action,
        kind: event.actor_kind,
        label: event.actor_label,
        target: event.target,
        shop: event.shop_id,
      })),
    ).toEqual([
      {
        action: 'withdrawal.rejected',
        kind: 'operator',
        label: 'cli:carol',
        target: second.withdrawal_id,
        shop: shop.shopId,
      },
      {
        action: 'withdrawal.approved',
        kind: 'operator',
        label: 'cli:bob',
        target: first.withdrawal_id,
        shop: shop.shopId,
      },
      {
        action: 'withdrawal.requested',
        kind: 'operator',
        label: 'cli:alice',
        target: second.withdrawal_id,
        shop: shop.shopId,
      },
      {
        action: 'withdrawal.requested',
        kind: 'operator',
        label: 'cli:alice',
        target: first.withdrawal_id,
        shop: shop.shopId,
      },
      {
        action: 'withdrawal.rule_set',
        kind: 'operator',
        label: 'operator',
        target: shop.merchantId,
        shop: shop.shopId,
      },
    ]);
    expect(page.data[0]!.details).toEqual({ requested_by: 'cli:alice', amount: '5', reason: 'wrong address' });
    expect(page.data[3]!.details).toMatchObject({ external_id: 'audit-1', amount: '5', status: 'awaiting_approval' });
    await testApp.expectLedgerGreen();
  });
});

describe.each(backends)('paygate merchant create on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-audit-cli-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl };
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it('records merchant.created by the operator, with and without a cabinet owner', async () => {
    const create = async (email: string, extra: string[]) => {
      const result = await runPaygateInProcess(
        ['merchant', 'create', '--name', 'Audited shop', '--email', email, '--json', ...extra],
        env,
      );
      expect(result.code, result.stderr).toBe(0);
      return lastJsonLine<CreatedMerchant>(result.stdout);
    };
    const plain = await create('plain@example.test', []);
    const owned = await create('owned@example.test', ['--password', 'correct horse battery']);
    const handle = await openDatabase({ url: databaseUrl, dataDir: databaseUrl ? undefined : join(dataDir, 'pglite') });
    try {
      for (const [created, owner] of [
        [plain, false],
        [owned, true],
      ] as const) {
        const events = await listAuditEvents(handle.db, parseAuditFilter(created.merchant_id, {}), { limit: 10 });
        expect(events.data).toHaveLength(1);
        expect(events.data[0]).toMatchObject({
          action: 'merchant.created',
          actor_kind: 'operator',
          actor_id: null,
          target: created.merchant_id,
          details: { name: 'Audited shop', mode: 'sandbox', owner },
        });
        expect(events.data[0]!.actor_label).toMatch(/^cli/);
      }
    } finally {
      await handle.close();
    }
  });
});
