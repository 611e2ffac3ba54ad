// kill -9 of a real worker process running the sign-once executor, between
// signing and broadcasting, between broadcasting and recording, and while it
// records results; then a successor process: every recipient gets exactly one
// transfer (the simulated chain's own balances), every transfer is confirmed
// with one signed transaction. The database is on disk (PGlite) or a server.
// The same again with a faulty node asked first and an honest one second: a
// lagging node, one with its history off, one that hides transactions.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.ts';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.ts';
import { inTransaction } from '../../../src/db/transaction.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { signingKeyFromMnemonic } from '../../../src/crypto/keys/hd-keys.ts';
import type { ExecutorStep } from '../../../src/crypto/sending/executor-context.ts';
import { enqueueOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import type { NodeFaultSettings } from '../../../src/crypto/simchain/node-faults.ts';
import { checkLedgerInvariants } from '../../../src/ledger/ledger-check.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../../support/databases.ts';
import { freshAddress } from './executor-support.ts';

const CHILD = fileURLToPath(new URL('./executor-child.ts', import.meta.url));
const TRANSFERS = 8;

describe.each(backends)('the executor killed -9 between steps, on %s', (backend) => {
  let dir: string;
  let databaseUrl: string | undefined;
  let chainServer: SimulatedChainServer;
  let miner: NodeJS.Timeout | undefined;
  /** A child still running when a case ends (it failed or timed out) is killed, so it cannot outlive its case. */
  const running = new Set<ReturnType<typeof spawn>>();
  const mnemonic = generateMnemonic(english, 256);
  const key = signingKeyFromMnemonic(mnemonic);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'paygate-executor-kill-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    chainServer = await startSimulatedChainServer({ seed: 'executor kill test', clock: 'manual' });
    chainServer.chain.faucet(key.hotWalletAddress, { trxSun: 100_000_000_000n, usdt: 1_000_000_000n });
  });
  afterEach(async () => {
    clearInterval(miner);
    for (const child of running) child.kill('SIGKILL');
    running.clear();
    await chainServer.close();
    await rm(dir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  const open = (): Promise<DatabaseHandle> =>
    openDatabase({ url: databaseUrl, dataDir: databaseUrl ? undefined : join(dir, 'pglite') });

  function runChild(
    crashAt: ExecutorStep | undefined,
    nodeUrls: readonly string[],
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CHILD], {
        env: {
          PATH: process.env.PATH,
          PAYGATE_TEST_DATABASE_URL: databaseUrl ?? '',
          PAYGATE_TEST_PGLITE_DIR: join(dir, 'pglite'),
          PAYGATE_TEST_MNEMONIC: mnemonic,
          PAYGATE_TEST_NODE_URL: nodeUrls.join(','),
          ...(crashAt ? { PAYGATE_TEST_CRASH_AT: crashAt } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      running.add(child);
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        running.delete(child);
        resolve({ code, signal, output });
      });
    });
  }

  const STEPS: readonly ExecutorStep[] = ['after-sign', 'after-broadcast', 'before-finish', 'inside-finish'];
  const FAULTY_NODES: readonly [string, NodeFaultSettings][] = [
    ['honest', {}],
    ['lagging', { lagBlocks: 25 }],
    ['history-off', { historyOff: true }],
    ['hiding', { hideTransactions: true }],
  ];
  const cases = FAULTY_NODES.flatMap(([name, faults]) => STEPS.map((step) => [step, name, faults] as const));

  it.each(cases)(
    'killed -9 at %s, a %s node asked first: every recipient is paid exactly once',
    { timeout: 600_000 },
    async (crashAt, name, faults) => {
      const recipients = Array.from({ length: TRANSFERS }, () => freshAddress());
      const setup = await open();
      await migrate(setup);
      await inTransaction(setup.db, async (tx) => {
        for (const [index, to] of recipients.entries()) {
          await enqueueOutgoingTransfer(tx, systemClock, {
            chain: 'tron-live',
            purpose: 'payout',
            ownerId: `po_kill_${index}`,
            asset: 'USDT',
            from: { kind: 'hot_wallet' },
            to,
            amount: BigInt(index + 1) * 1_000_000n,
          });
        }
      });
      await setup.close();
      const faulty = chainServer.node(name);
      faulty.faults.set(faults);
      const nodeUrls = name === 'honest' ? [chainServer.url] : [faulty.url, chainServer.url];

      // The chain moves on its own while the workers run: a block every 40 ms.
      miner = setInterval(() => chainServer.chain.mine(1), 40);
      const crashed = await runChild(crashAt, nodeUrls);
      expect(crashed.signal, crashed.output).toBe('SIGKILL');
      const successor = await runChild(undefined, nodeUrls);
      expect(successor.code, successor.output).toBe(0);
      clearInterval(miner);

      for (const [index, to] of recipients.entries())
        expect(chainServer.chain.state.usdtBalance(to)).toBe(BigInt(index + 1) * 1_000_000n);
      const check = await open();
      try {
        const transfers = await check.db.selectFrom('crypto_outgoing_transfers').select(['id', 'status']).execute();
        expect(transfers.map((row) => row.status)).toEqual(Array(TRANSFERS).fill('confirmed'));
        const attempts = await check.db
          .selectFrom('crypto_outgoing_attempts')
          .select(['transfer_id', 'status'])
          .execute();
        // One landed per transfer; any other was proven dead first (signed, never broadcast, expired before the successor came).
        const landed = attempts.filter((attempt) => attempt.status === 'landed');
        expect(new Set(landed.map((attempt) => attempt.transfer_id)).size).toBe(TRANSFERS);
        expect(landed).toHaveLength(TRANSFERS);
        expect(attempts.every((attempt) => attempt.status === 'landed' || attempt.status === 'dead')).toBe(true);
        // Every fee booked once: the bookings (one per finishing transaction) add up to the fees recorded.
        const fees = await check.db
          .selectFrom('ledger_transfers')
          .select('amount')
          .where('idempotency_key', 'like', 'outgoing-fee:%')
          .execute();
        const recorded = await check.db.selectFrom('crypto_outgoing_transfers').select('fee_sun').execute();
        expect(fees.reduce((sum, fee) => sum + fee.amount, 0n)).toBe(
          recorded.reduce((sum, row) => sum + sunToMicroUsdt(row.fee_sun!, 300_000n), 0n),
        );
        expect((await checkLedgerInvariants(check.db)).violations).toEqual([]);
      } finally {
        await check.close();
      }
    },
  );
});
