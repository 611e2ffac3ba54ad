// kill -9 of a real gateway process while its chain watcher works, then a
// restart: every deposit is credited exactly once. The chain is the test's own
// simulated chain, served on loopback and configured as the gateway's live
// TRON node (PAYGATE_TRON_NODE_URLS), with an xpub file of the test's key
// (PAYGATE_TRON_XPUB_FILE): the gateway runs its production path unchanged.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/database.ts';
import { signingKeyFromMnemonic } from '../../../src/crypto/keys/hd-keys.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { checkLedgerInvariants } from '../../../src/ledger/ledger-check.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../../support/databases.ts';

const INVOICES = 12;

describe.each(backends)('a gateway killed -9 while its chain watcher works, on %s', (backend) => {
  let dataDir: string;
  let databaseUrl: string | undefined;
  let chainServer: SimulatedChainServer;
  let env: Record<string, string | undefined>;
  let apiKey: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-watcher-kill-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    chainServer = await startSimulatedChainServer({ seed: 'watcher kill test', clock: 'manual' });
    const xpubFile = join(dataDir, 'tron-xpub');
    await writeFile(xpubFile, `${signingKeyFromMnemonic(generateMnemonic(english, 256)).xpub}\n`, { mode: 0o600 });
    env = {
      PAYGATE_DATA_DIR: join(dataDir, 'data'),
      DATABASE_URL: databaseUrl,
      PORT: '0',
      PAYGATE_TRON_XPUB_FILE: xpubFile,
      PAYGATE_TRON_NODE_URLS: chainServer.url,
      // The test polls the invoices every 20 ms.
      PAYGATE_RATE_LIMIT_PER_MINUTE: '1000000',
    };
    expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Kill shop', '--email', 'kill@example.test', '--live', '--json'],
      env,
    );
    expect(created.code).toBe(0);
    apiKey = lastJsonLine<{ api_key: string }>(created.stdout).api_key;
  });
  afterAll(async () => {
    await chainServer.close();
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  async function api<T>(
    baseUrl: string,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: T }> {
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

  async function statuses(baseUrl: string): Promise<string[]> {
    const { status, json } = await api<{ data: { status: string }[] }>(baseUrl, 'GET', '/v1/crypto/invoices?limit=100');
    expect(status).toBe(200);
    return json.data.map((invoice) => invoice.status);
  }

  /** Asks every `pollMs` until `predicate` holds; the test's timeout is the only bound. */
  async function waitFor(predicate: () => Promise<boolean>, pollMs: number): Promise<void> {
    while (!(await predicate())) await new Promise((resolve) => setTimeout(resolve, pollMs));
  }

  function stopGracefully(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.kill('SIGTERM');
    return closed;
  }

  it('after kill -9 mid-work and a restart, every deposit is credited exactly once', async () => {
    const first = await startPaygate(['--role', 'all'], env);
    let expectedMicro = 0n;
    const invoiceIds: string[] = [];
    try {
      for (let index = 0; index < INVOICES; index += 1) {
        const amount = `${index + 1}.5`;
        const created = await api<{ invoice_id: string; address: string }>(first.url, 'POST', '/v1/crypto/invoices', {
          external_id: `kill-${index}`,
          amount,
          network: 'TRC20',
        });
        expect(created.status).toBe(201);
        invoiceIds.push(created.json.invoice_id);
        expect(
          chainServer.chain.sendUsdt({
            to: tronAddress(created.json.address),
            amount: BigInt(index + 1) * 1_000_000n + 500_000n,
          }).result,
        ).toBe(true);
        expectedMicro += BigInt(index + 1) * 1_000_000n + 500_000n;
        chainServer.chain.mine(3); // deposits spread over many blocks: several scan batches
      }
      chainServer.chain.mine(chainServer.chain.parameters.solidityDepth);
      // Killed as soon as the watcher has done anything visible (seen or settled), mid-pass.
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        first.child.once('exit', (_code, signal) => resolve(signal)),
      );
      // Typically after the first scan batch: some invoices confirming, none settled yet.
      await waitFor(async () => (await statuses(first.url)).some((status) => status !== 'pending'), 20);
      first.child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    }

    // The successor waits out the dead watcher's lease (30 s), then finishes.
    const second = await startPaygate(['--role', 'all'], env);
    try {
      await waitFor(async () => (await statuses(second.url)).every((status) => status === 'paid'), 500);
    } finally {
      await stopGracefully(second.child);
    }

    const handle = await openDatabase({
      url: databaseUrl,
      dataDir: databaseUrl ? undefined : join(dataDir, 'data', 'pglite'),
    });
    try {
      const deposits = await handle.db.selectFrom('crypto_deposits').select(['id', 'invoice_id', 'status']).execute();
      expect(deposits).toHaveLength(INVOICES);
      expect(new Set(deposits.map((deposit) => deposit.invoice_id))).toEqual(new Set(invoiceIds));
      expect(deposits.every((deposit) => deposit.status === 'credited')).toBe(true);
      // The credits (posted), not the pending credits of the confirming days (`crypto-deposit:<id>:<round>`).
      const credits = await handle.db
        .selectFrom('ledger_transfers')
        .select(['idempotency_key', 'amount'])
        .where('idempotency_key', 'like', 'crypto-deposit:%')
        .where('status', '=', 'posted')
        .execute();
      expect(credits.map((credit) => credit.idempotency_key).sort()).toEqual(
        deposits.map((deposit) => `crypto-deposit:${deposit.id}`).sort(),
      );
      expect(credits.reduce((sum, credit) => sum + credit.amount, 0n)).toBe(expectedMicro);
      const report = await checkLedgerInvariants(handle.db);
      expect(report.violations).toEqual([]);
      const funded = await handle.db
        .selectFrom('webhook_events')
        .select('id')
        .where('type', '=', 'crypto.balance.funded')
        .execute();
      expect(funded).toHaveLength(INVOICES);
    } finally {
      await handle.close();
    }
  });
});
