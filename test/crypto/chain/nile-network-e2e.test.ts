// A real gateway process started with PAYGATE_TRON_NETWORK=nile, its only node
// our simulated chain running as Nile (Nile's TetherToken contract and prices,
// what `paygate chain simulate --network nile` serves): a live shop receives
// USDT to an invoice and pays out, and every object says network_mode
// "testnet": in the API, in the webhook its callback_url receives, in the
// outbox's payout events, and on the payer's page as a visible marker.
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.ts';
import { signingKeyFromMnemonic } from '../../../src/crypto/keys/hd-keys.ts';
import { NILE_CHAIN_PARAMETERS } from '../../../src/crypto/simchain/chain-parameters.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { TRON_NETWORK_PRESETS } from '../../../src/crypto/tron/tron-networks.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../../support/databases.ts';

const NILE_USDT = TRON_NETWORK_PRESETS.nile.usdtContract;

interface Received {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** The invoice's callback_url on loopback: every webhook body it is sent, parsed. */
async function startReceiver(): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((incoming, reply) => {
    let body = '';
    incoming.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    incoming.on('end', () => {
      received.push(JSON.parse(body) as Received);
      reply.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/paygate`, received, server };
}

describe.each(backends)('a gateway on the Nile testnet (simulated), on %s', (backend) => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  let chainServer: SimulatedChainServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let env: Record<string, string | undefined>;
  let apiKey: string;
  let hotWallet: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-nile-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    chainServer = await startSimulatedChainServer({
      seed: 'nile network test',
      clock: 'manual',
      parameters: NILE_CHAIN_PARAMETERS,
    });
    receiver = await startReceiver();
    const mnemonic = generateMnemonic(english, 256);
    const key = signingKeyFromMnemonic(mnemonic);
    hotWallet = key.hotWalletAddress;
    const xpubFile = join(dataDir, 'tron-xpub');
    await writeFile(xpubFile, `${key.xpub}\n`, { mode: 0o600 });
    env = {
      PAYGATE_DATA_DIR: join(dataDir, 'data'),
      DATABASE_URL: databaseUrl,
      PORT: '0',
      PAYGATE_TRON_NETWORK: 'nile',
      // Nile's public nodes are the default; the test overrides them with its simulated Nile.
      PAYGATE_TRON_NODE_URLS: chainServer.url,
      PAYGATE_TRON_XPUB_FILE: xpubFile,
      PAYGATE_ALLOW_HTTP_WEBHOOKS: '1',
      PAYGATE_WEBHOOK_ALLOW_PRIVATE: '1',
      PAYGATE_RATE_LIMIT_PER_MINUTE: '1000000',
    };
    expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
    const imported = await runPaygateInProcess(['crypto', 'keys', 'import'], env, { stdin: `${mnemonic}\n` });
    expect(imported.code, imported.stderr).toBe(0);
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Nile shop', '--email', 'nile@example.test', '--live', '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    apiKey = lastJsonLine<{ api_key: string }>(created.stdout).api_key;
  });
  afterAll(async () => {
    await chainServer.close();
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  async function api<T>(baseUrl: string, method: 'GET' | 'POST', path: string, body?: unknown) {
    const response = await request(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, json: (await response.body.json()) as T };
  }

  /** Mines a block between looks, so the gateway's watcher and executor find what they wait for; the test's timeout is the only bound. */
  async function mineUntil(predicate: () => Promise<boolean>): Promise<void> {
    while (!(await predicate())) {
      chainServer.chain.mine(1);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('receives to an invoice and pays out on Nile, and marks both testnet in the API, webhooks and the page', async () => {
    const gateway = await startPaygate(['--role', 'all'], env);
    try {
      // Receive: the invoice is on Nile's contract, paid from a funded payer of the simulated Nile.
      const invoice = await api<{ invoice_id: string; address: string; network_mode: string }>(
        gateway.url,
        'POST',
        '/v1/crypto/invoices',
        { external_id: 'nile-order-1', amount: '100', network: 'TRC20', callback_url: receiver.url },
      );
      expect(invoice.status).toBe(201);
      expect(invoice.json.network_mode).toBe('testnet');
      const sent = chainServer.chain.sendUsdt({ to: tronAddress(invoice.json.address), amount: 100_000_000n });
      expect(sent.result).toBe(true);
      await mineUntil(
        async () =>
          (await api<{ status: string }>(gateway.url, 'GET', `/v1/crypto/invoices/${invoice.json.invoice_id}`)).json
            .status === 'paid',
      );
      const paid = await api<Record<string, unknown>>(
        gateway.url,
        'GET',
        `/v1/crypto/invoices/${invoice.json.invoice_id}`,
      );
      expect(paid.json).toMatchObject({ status: 'paid', network_mode: 'testnet', paid_amount: '100' });
      await mineUntil(async () =>
        receiver.received.some((event) => event.type === 'crypto.invoice.updated' && event.data.status === 'paid'),
      );
      const updates = receiver.received.filter((event) => event.type === 'crypto.invoice.updated');
      expect(updates.length).toBeGreaterThan(0);
      expect(updates.every((event) => event.data.network_mode === 'testnet')).toBe(true);

      // The payer's page says it is a testnet invoice.
      const page = await request(`${gateway.url}/pay/crypto/${invoice.json.invoice_id}?lang=en`);
      expect(page.statusCode).toBe(200);
      const html = await page.body.text();
      expect(html).toContain('data-testid="testnet-marker"');
      expect(html).toContain('Testnet (Nile)');

      // Pay out: the hot wallet holds Nile test TRX and USDT, as the faucet gives them.
      chainServer.chain.faucet(tronAddress(hotWallet), { trxSun: 5_000_000_000n, usdt: 500_000_000n });
      const recipient = chainServer.chain.payers[1]!.address;
      const recipientBefore = chainServer.chain.state.usdtBalance(recipient);
      const payout = await api<{ payout_id: string; network_mode: string; status: string }>(
        gateway.url,
        'POST',
        '/v1/crypto/payouts',
        { external_id: 'nile-payout-1', amount: '10', address: recipient, network: 'TRC20' },
      );
      expect(payout.status, JSON.stringify(payout.json)).toBe(201);
      expect(payout.json.network_mode).toBe('testnet');
      await mineUntil(
        async () =>
          (await api<{ status: string }>(gateway.url, 'GET', `/v1/crypto/payouts/${payout.json.payout_id}`)).json
            .status === 'completed',
      );
      const completed = await api<{ tx_hash: string; network_mode: string }>(
        gateway.url,
        'GET',
        `/v1/crypto/payouts/${payout.json.payout_id}`,
      );
      expect(completed.json.network_mode).toBe('testnet');
      // The transfer went out on Nile's TetherToken: the only token the simulated Nile has.
      expect(chainServer.chain.findTransaction(completed.json.tx_hash)).toBeDefined();
      expect(chainServer.chain.parameters.usdtContract).toBe(NILE_USDT);
      expect(chainServer.chain.state.usdtBalance(recipient) - recipientBefore).toBe(10_000_000n);
    } finally {
      const closed = new Promise<void>((resolve) => gateway.child.once('close', () => resolve()));
      gateway.child.kill('SIGTERM');
      await closed;
    }

    const handle = await openDatabase({
      url: databaseUrl,
      dataDir: databaseUrl ? undefined : join(dataDir, 'data', 'pglite'),
    });
    try {
      const events = await handle.db
        .selectFrom('webhook_events')
        .select(['type', 'payload'])
        .where('type', 'in', ['crypto.payout.updated', 'crypto.invoice.updated'])
        .execute();
      expect(events.some((event) => event.type === 'crypto.payout.updated')).toBe(true);
      for (const event of events) expect(JSON.parse(event.payload).data.network_mode).toBe('testnet');
    } finally {
      await handle.close();
    }
  });
});
