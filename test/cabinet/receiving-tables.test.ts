// The cabinet's tables of crypto receiving through the real app, its sandbox
// chain, the real chain watcher and the sign-once executor: crypto invoices,
// static wallets, deposits and refunds filtered by status, days, amounts and
// search, paged by cursor, downloaded as the API lists them; each object's page
// with its timeline (deposits, ledger, webhook events); a wallet blocked from
// its page; and a held deposit of a blocked wallet refunded from the cabinet
// (fee previewed, one refund for a double submit, audited, `completed` on chain).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_PAGE_ROWS } from '../../src/cabinet/listings/listing-routes.ts';
import { backends } from '../support/databases.ts';
import { externalId, recipient, type PayoutShop } from '../crypto/payouts/payout-support.ts';
import { createChainTestApp, type ChainTestApp } from '../crypto/refunds/refund-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { enrol } from './two-factor-support.ts';

const DAY_MS = 86_400_000;

interface Invoice {
  invoice_id: string;
  external_id: string;
  address: string;
  status: string;
}

/** The first column of a CSV download, the header left out. */
function csvIds(body: string): string[] {
  return body
    .split('\r\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => line.split(',')[0]!);
}

describe.each(backends)('cabinet receiving tables on %s', (backend) => {
  let testApp: ChainTestApp;
  let owner: CabinetPerson;
  let shop: PayoutShop;
  let admin: CabinetClient;
  let viewer: CabinetClient;
  let overpaid: Invoice;
  let short: Invoice;
  let unpaid: Invoice;
  let overpaidDeposit: string;
  let dayOne: string;

  /** A signed-in client; `secondFactor` enrols one first (owners, admins and finance need it to move money). */
  async function signedIn(person: CabinetPerson, options: { secondFactor?: boolean } = {}): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    if (options.secondFactor) await enrol(client, () => testApp.clock.now());
    await client.get('/cabinet/language/en?back=/cabinet');
    return client;
  }

  async function invoice(amount: string): Promise<Invoice> {
    return testApp.post(shop, '/v1/crypto/invoices', { external_id: externalId('inv'), amount, network: 'TRC20' });
  }

  async function pay(address: string, amount: string): Promise<void> {
    await testApp.post(shop, '/v1/test_helpers/crypto/deposits', { address, amount });
    await testApp.mine(shop, 1);
    await testApp.mine(shop, 19);
    await testApp.watch();
  }

  const url = (path: string) => `/cabinet/shops/${shop.shopId}/${path}`;

  beforeAll(async () => {
    testApp = await createChainTestApp(backend);
    owner = await createOwner(testApp);
    shop = { shopId: owner.shopId, merchantId: owner.merchantId, key: owner.apiKey };
    await testApp.post(shop, '/v1/test_helpers/crypto/faucet', { usdt: '100000', trx: '100000' });
    await testApp.mine(shop, 1);
    await testApp.watch();
    dayOne = testApp.clock.now().toISOString().slice(0, 10);
    overpaid = await invoice('10');
    testApp.clock.advance(1_000);
    short = await invoice('20');
    testApp.clock.advance(DAY_MS);
    unpaid = await invoice('7');
    await pay(overpaid.address, '12');
    await pay(short.address, '5');
    overpaidDeposit = (await testApp.depositIdsOfInvoice(overpaid.invoice_id))[0]!;
    admin = await signedIn(await addMember(testApp, owner, 'admin'), { secondFactor: true });
    viewer = await signedIn(await addMember(testApp, owner, 'viewer'));
  });
  afterAll(() => testApp?.close());

  it('the invoices table narrows by status, days, amount and search (id, external_id, address, tx hash)', async () => {
    const ids = async (query: string) => {
      const page = await viewer.get(url(`invoices${query}`));
      expect(page.statusCode, page.body).toBe(200);
      return [overpaid, short, unpaid]
        .filter((each) => page.body.includes(each.invoice_id))
        .map((each) => each.invoice_id);
    };
    expect(await ids('')).toEqual([overpaid.invoice_id, short.invoice_id, unpaid.invoice_id]);
    expect(await ids('?status=overpaid')).toEqual([overpaid.invoice_id]);
    expect(await ids('?status=pending')).toEqual([unpaid.invoice_id]);
    expect(await ids(`?from=${dayOne}&to=${dayOne}`)).toEqual([overpaid.invoice_id, short.invoice_id]);
    expect(await ids('?amount_min=15')).toEqual([short.invoice_id]);
    expect(await ids('?amount_min=5&amount_max=10')).toEqual([overpaid.invoice_id, unpaid.invoice_id]);
    expect(await ids(`?q=${short.external_id}`)).toEqual([short.invoice_id]);
    expect(await ids(`?q=${unpaid.address}`)).toEqual([unpaid.invoice_id]);
    expect(await ids(`?q=${overpaid.invoice_id}`)).toEqual([overpaid.invoice_id]);
    const deposit = await testApp.context.db
      .selectFrom('crypto_deposits')
      .select('tx_id')
      .where('id', '=', overpaidDeposit)
      .executeTakeFirstOrThrow();
    expect(await ids(`?q=${deposit.tx_id}`)).toEqual([overpaid.invoice_id]);
  });

  it('a bad filter is 400 with the form still shown, and nothing listed', async () => {
    for (const query of ['?status=nope', '?from=2026-13-01', '?amount_min=abc', '?amount_min=9&amount_max=1']) {
      const page = await viewer.get(url(`invoices${query}`));
      expect(page.statusCode, query).toBe(400);
      expect(page.body).toContain('name="status"');
      expect(page.body).not.toContain(overpaid.invoice_id);
    }
  });

  it('the CSV of a filtered invoices table lists the ids the API lists for the same status, in the same order', async () => {
    const ownerClient = await signedIn(owner);
    for (const status of ['', 'overpaid', 'pending']) {
      const csv = await ownerClient.get(url(`invoices.csv?columns=invoice_id${status ? `&status=${status}` : ''}`));
      expect(csv.statusCode, csv.body).toBe(200);
      const api = await testApp.get(shop, `/v1/crypto/invoices?limit=100${status ? `&status=${status}` : ''}`);
      expect(csvIds(csv.body)).toEqual(api.data.map((row: Invoice) => row.invoice_id));
    }
  });

  it('an invoice’s page shows expected against received, its deposits and its timeline; another shop’s is 404', async () => {
    const page = await viewer.get(url(`invoices/${overpaid.invoice_id}`));
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('+2 (overpaid)');
    expect(page.body).toContain(`/deposits/${overpaidDeposit}`);
    expect(page.body).toContain('Deposit seen in block');
    expect(page.body).toContain('Ledger transfer');
    expect(page.body).toMatch(/\/webhooks\/events\/evt_/);
    expect(page.body).not.toContain('/refund/preview'); // a viewer may not refund
    const shortPage = await viewer.get(url(`invoices/${short.invoice_id}`));
    expect(shortPage.body).toMatch(/−15 \(underpaid\)/);

    const stranger = await createOwner(testApp);
    const theirs = await testApp.post(
      { shopId: stranger.shopId, merchantId: stranger.merchantId, key: stranger.apiKey },
      '/v1/crypto/invoices',
      { external_id: externalId('inv'), amount: '1', network: 'TRC20' },
    );
    for (const path of [
      `invoices/${theirs.invoice_id}`,
      'invoices/inv_nothing',
      'invoices/x',
      'deposits/dep_nothing',
      'deposits/%27%3E',
      'wallets/nothing',
      'refunds/ref_nothing',
    ])
      expect((await viewer.get(url(path))).statusCode, path).toBe(404);
  });

  it('the invoices table pages by cursor: the second page starts after the first', async () => {
    const other = await createOwner(testApp);
    const otherShop = { shopId: other.shopId, merchantId: other.merchantId, key: other.apiKey };
    const made: string[] = [];
    for (let index = 0; index <= LISTING_PAGE_ROWS; index++) {
      testApp.clock.advance(1);
      made.push(
        (
          await testApp.post(otherShop, '/v1/crypto/invoices', {
            external_id: externalId('inv'),
            amount: '1',
            network: 'TRC20',
          })
        ).invoice_id,
      );
    }
    const client = await signedIn(other);
    const first = await client.get(`/cabinet/shops/${other.shopId}/invoices`);
    expect(made.filter((id) => first.body.includes(id))).toHaveLength(LISTING_PAGE_ROWS);
    expect(first.body).not.toContain(made[0]);
    const next = /href="([^"]*cursor=[^"]+)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toBeDefined();
    const second = await client.get(next!);
    expect(made.filter((id) => second.body.includes(id))).toEqual([made[0]]);
  });

  it('wallets: filtered by status and search; blocked from the wallet’s page (audited); the CSV matches the API', async () => {
    const active = await testApp.post(shop, '/v1/crypto/wallets', {
      client_id: externalId('client'),
      network: 'TRC20',
    });
    const toBlock = await testApp.post(shop, '/v1/crypto/wallets', {
      client_id: externalId('client'),
      network: 'TRC20',
    });
    const page = await admin.get(url(`wallets/${toBlock.wallet_id}`));
    expect(page.statusCode, page.body).toBe(200);
    const blocked = await admin.post(url(`wallets/${toBlock.wallet_id}/block`));
    expect(blocked.statusCode, blocked.body).toBe(303);
    expect(blocked.headers.location).toBe(url(`wallets/${toBlock.wallet_id}?done=blocked`));
    expect((await admin.get(blocked.headers.location!)).body).toContain(`/wallets/${toBlock.wallet_id}/unblock`);
    const audit = await testApp.context.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind'])
      .where('target', '=', toBlock.wallet_id)
      .execute();
    expect(audit).toEqual([{ action: 'wallet.blocked', actor_kind: 'user' }]);

    const listed = async (query: string) => {
      const body = (await viewer.get(url(`wallets${query}`))).body;
      return [active, toBlock].filter((wallet) => body.includes(wallet.wallet_id)).map((wallet) => wallet.wallet_id);
    };
    expect(await listed('?status=blocked')).toEqual([toBlock.wallet_id]);
    expect(await listed(`?q=${active.client_id}`)).toEqual([active.wallet_id]);
    expect(await listed(`?q=${toBlock.address}`)).toEqual([toBlock.wallet_id]);
    const csv = await admin.get(url('wallets.csv?status=blocked&columns=wallet_id'));
    const api = await testApp.get(shop, '/v1/crypto/wallets?status=blocked&limit=100');
    expect(csvIds(csv.body)).toEqual(api.data.map((wallet: { wallet_id: string }) => wallet.wallet_id));
    expect((await viewer.post(url(`wallets/${active.wallet_id}/block`))).statusCode).toBe(403);
  });

  it('a held deposit of a blocked wallet is refunded from the cabinet: fee previewed, one refund for a double submit, audited, completed on chain', async () => {
    const wallet = await testApp.post(shop, '/v1/crypto/wallets', {
      client_id: externalId('client'),
      network: 'TRC20',
    });
    await testApp.post(shop, `/v1/crypto/wallets/${wallet.wallet_id}/block`);
    await pay(wallet.address, '30');
    const [deposit] = (await testApp.get(shop, `/v1/crypto/wallets/${wallet.wallet_id}`)).deposits;
    expect(deposit.status).toBe('held');

    // The deposits table finds it by status, address and tx hash.
    for (const query of ['?status=held', `?q=${wallet.address}`, `?q=${deposit.tx_id}`, `?q=${deposit.deposit_id}`]) {
      const table = await viewer.get(url(`deposits${query}`));
      expect(table.body, query).toContain(deposit.deposit_id);
      expect(table.body, query).not.toContain(overpaidDeposit);
    }
    expect((await viewer.get(url('deposits?status=credited'))).body).not.toContain(deposit.deposit_id);
    const byAmount = (await viewer.get(url('deposits?amount_min=29.5&amount_max=30'))).body;
    expect(byAmount).toContain(deposit.deposit_id);
    expect(byAmount).not.toContain(overpaidDeposit);
    const seenDay = deposit.seen_at.slice(0, 10);
    expect((await viewer.get(url(`deposits?from=${seenDay}&to=${seenDay}`))).body).toContain(deposit.deposit_id);
    expect((await viewer.get(url(`deposits?to=${dayOne}`))).body).not.toContain(deposit.deposit_id);

    const depositPage = await admin.get(url(`deposits/${deposit.deposit_id}`));
    expect(depositPage.statusCode, depositPage.body).toBe(200);
    expect(depositPage.body).toContain(`/wallets/${wallet.wallet_id}`);
    const formId = /name="external_id" value="([^"]+)"/.exec(depositPage.body)?.[1];
    expect(formId).toMatch(/^cabinet-/);

    const bad = await admin.post(url(`deposits/${deposit.deposit_id}/refund/preview`), {
      external_id: formId!,
      address: 'Tnot-an-address',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('not a valid TRON address');

    const address = recipient();
    const preview = await admin.post(url(`deposits/${deposit.deposit_id}/refund/preview`), {
      external_id: formId!,
      address,
    });
    expect(preview.statusCode, preview.body).toBe(200);
    const fee = /Network fee, USDT<\/dt>\s*<dd>([\d.]+)<\/dd>/.exec(preview.body)?.[1];
    const back = /Sent back, USDT<\/dt>\s*<dd><strong>([\d.]+)<\/strong>/.exec(preview.body)?.[1];
    expect(Number(fee)).toBeGreaterThan(0);
    expect(Math.round((Number(fee) + Number(back)) * 1e6)).toBe(30_000_000);
    expect(
      await testApp.context.db.selectFrom('crypto_refunds').select('id').where('shop_id', '=', shop.shopId).execute(),
    ).toEqual([]);

    const confirmed = await admin.post(url(`deposits/${deposit.deposit_id}/refund`), { external_id: formId!, address });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    const again = await admin.post(url(`deposits/${deposit.deposit_id}/refund`), { external_id: formId!, address });
    expect(again.headers.location).toBe(confirmed.headers.location);
    const refundId = /refunds\/(ref_[0-9a-z]+)/.exec(confirmed.headers.location!)![1]!;
    const refund = await testApp.get(shop, `/v1/crypto/refunds/${refundId}`);
    expect(refund).toMatchObject({
      status: 'pending',
      held: true,
      received_amount: '30',
      network_fee: fee,
      external_id: formId,
    });
    const audit = await testApp.context.db
      .selectFrom('audit_events')
      .select(['action', 'actor_kind'])
      .where('target', '=', refundId)
      .execute();
    expect(audit).toEqual([{ action: 'refund.requested', actor_kind: 'user' }]);

    const twice = await admin.post(url(`deposits/${deposit.deposit_id}/refund/preview`), {
      external_id: 'cabinet-another',
      address,
    });
    expect(twice.statusCode).toBe(409);
    expect(twice.body).toContain('Already refunded');

    await testApp.carryToFinal(shop);
    const completed = await testApp.get(shop, `/v1/crypto/refunds/${refundId}`);
    expect(completed.status).toBe('completed');
    const refundPage = await viewer.get(url(`refunds/${refundId}`));
    expect(refundPage.statusCode, refundPage.body).toBe(200);
    expect(refundPage.body).toContain('Refund completed');
    expect(refundPage.body).toContain(completed.tx_hash);
    expect(refundPage.body).toContain('Ledger transfer');
    const table = await viewer.get(url(`refunds?status=completed&q=${completed.tx_hash}`));
    expect(table.body).toContain(refundId);
    expect((await viewer.get(url('refunds?status=pending'))).body).not.toContain(refundId);
    const depositAfter = await viewer.get(url(`deposits/${deposit.deposit_id}`));
    expect(depositAfter.body).toContain(`/refunds/${refundId}`);
  });

  it('an invoice’s credited deposits are refunded from its page; a viewer and a developer may not refund', async () => {
    const page = await admin.get(url(`invoices/${overpaid.invoice_id}`));
    expect(page.body).toContain(`/invoices/${overpaid.invoice_id}/refund/preview`);
    const formId = /name="external_id" value="([^"]+)"/.exec(page.body)![1]!;
    const address = recipient();
    const preview = await admin.post(url(`invoices/${overpaid.invoice_id}/refund/preview`), {
      external_id: formId,
      address,
    });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.body).toContain(overpaidDeposit);
    const created = await admin.post(url(`invoices/${overpaid.invoice_id}/refund`), { external_id: formId, address });
    expect(created.statusCode, created.body).toBe(303);
    const refundId = /refunds\/(ref_[0-9a-z]+)/.exec(created.headers.location!)![1]!;
    expect(await testApp.get(shop, `/v1/crypto/refunds/${refundId}`)).toMatchObject({
      invoice_id: overpaid.invoice_id,
      deposit_ids: [overpaidDeposit],
      received_amount: '12',
    });
    const developer = await signedIn(await addMember(testApp, owner, 'developer'));
    for (const client of [viewer, developer]) {
      await client.get(url(`invoices/${short.invoice_id}`));
      const refused = await client.post(url(`invoices/${short.invoice_id}/refund/preview`), { address });
      expect(refused.statusCode).toBe(403);
    }
  });
});
