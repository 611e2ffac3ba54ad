// `node bench/payout-executor.ts`: the sign-once executor's throughput and the
// reservation race, on PostgreSQL (a fresh database on BENCH_DATABASE_URL,
// dropped after) against the simulated chain over HTTP through the production
// node client. The chain's clock is driven fast: a block after every executor
// pass, so the 19 blocks to solidity take milliseconds, not a minute.
//   BENCH_EXECUTOR_DRY_RUN: unset, the executor's default (a dry run before the first transfer to each recipient:
//   every one here, the recipients being random); 1 dry-runs every transfer, 0 none.
//   1. throughput: BENCH_EXECUTOR_TRANSFERS (5,000) USDT transfers from the hot
//      wallet, timed from the first enqueue to the last `confirmed`. Target ≥ 500/s.
//   2. race: BENCH_EXECUTOR_RACERS (1,000) concurrent transactions each reserving
//      a payout from ONE merchant balance that covers only a fraction of them and
//      enqueuing its transfer; then every accepted one is sent. Target: accepted ×
//      amount never above the balance, exactly as many transfers as reservations,
//      the chain pays exactly those, and `ledger check` stays green.
// bench/payouts.ts (the payouts engineer's) calls runPayoutExecutorBench().
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { DepositSigningKey } from '../src/crypto/keys/hd-keys.ts';
import { recoverSignerAddress, signTransactionId } from '../src/crypto/tron/signing.ts';
import {
  encodeSignedTransaction,
  encodeTriggerSmartContractRaw,
  referenceBlockFields,
  transactionId,
} from '../src/crypto/tron/transaction.ts';
import type { TronNodeClient } from '../src/crypto/tron/node-client.ts';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createBenchDatabase } from './bench-database.ts';
import { envNumber, verdict } from './verdict.ts';
import { systemClock } from '../src/clock.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { inTransaction, type Db, type Tx } from '../src/db/transaction.ts';
import { InsufficientFundsError } from '../src/errors.ts';
import { newId } from '../src/ids.ts';
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { signingKeyFromMnemonic } from '../src/crypto/keys/hd-keys.ts';
import { createOutgoingExecutor, type OutgoingExecutor } from '../src/crypto/sending/executor.ts';
import { createSigningPool } from '../src/crypto/sending/signing-pool.ts';
import {
  enqueueOutgoingTransfer,
  enqueueOutgoingTransfers,
  type OutgoingOutcomeHandler,
  type OutgoingTransfer,
} from '../src/crypto/sending/outgoing-transfers.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createSimulatorControl, type SimulatorControl } from '../src/crypto/simchain/control-client.ts';
import { tronAddressFromEvm, type TronAddress } from '../src/crypto/tron/address.ts';
import { createTronNodeClient } from '../src/crypto/tron/node-client.ts';
import { createUsdtTransferEnergy } from '../src/crypto/chain/transfer-energy.ts';
import { transferCalldata, USDT_CONTRACT_MAINNET } from '../src/crypto/tron/trc20-usdt.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../src/ledger/ledger-accounts.ts';
import { checkLedgerInvariants } from '../src/ledger/ledger-check.ts';
import { post, reserve, transfer, voidPending, MAX_TIMEOUT_SECONDS } from '../src/ledger/ledger-service.ts';

export interface PayoutExecutorBenchResult {
  readonly transfers: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly passes: number;
  /** Of `seconds`: inserting the queued transfers (500 per transaction, one INSERT each, as a batch payout queues its items), before the executor's first pass. */
  readonly enqueueSeconds: number;
  readonly race: {
    readonly racers: number;
    readonly balanceMicro: bigint;
    readonly amountMicro: bigint;
    readonly accepted: number;
    readonly refused: number;
    readonly sentOnChainMicro: bigint;
    readonly overspent: boolean;
    readonly ledgerViolations: number;
  };
  readonly met: boolean;
  /** Measured in the same run when the figure misses 500/s: the work that cannot be avoided, on this machine. */
  readonly anchors?: Anchors;
}

export interface Anchors {
  readonly count: number;
  /** noble secp256k1 sign of `count` transaction ids, one after another on one thread. */
  readonly signPerSecond: number;
  /** noble public key recovery of the same signatures (what the chain does for each), one thread. */
  readonly recoverPerSecond: number;
  /** Both, one after the other: the CPU every transfer costs somewhere on this machine. */
  readonly signAndRecoverPerSecond: number;
  /** The chain process taking `count` pre-signed transfers over HTTP (the executor's client, its concurrency): intake alone. */
  readonly chainIntakePerSecond: number;
  readonly chainAccepted: number;
}

const logger = pino({ level: process.env.BENCH_LOG_LEVEL ?? 'error' });

/** Confirmed → post the reservation, failed → void it: what the payouts module does, in the executor's transaction. */
const reservationHandler: OutgoingOutcomeHandler = {
  async onFinal(tx: Tx, clock, outgoing: OutgoingTransfer) {
    if (!outgoing.ownerId.startsWith('race_')) return;
    const pendingId = `bench-reserve:${outgoing.ownerId}`;
    if (outgoing.status === 'confirmed') await post(tx, clock, { id: `bench-post:${outgoing.ownerId}`, pendingId });
    else await voidPending(tx, clock, { id: `bench-void:${outgoing.ownerId}`, pendingId });
  },
};

function randomRecipient(): TronAddress {
  return tronAddressFromEvm(randomBytes(20));
}

/** The simulated chain in a child process (bench/simchain-process.ts), so its signature checks run on another core than the executor. */
async function startChainProcess(): Promise<{ child: ChildProcess; control: SimulatorControl }> {
  // BENCH_CHAIN_CPU_PROF=<dir>: a CPU profile of the chain process (node --cpu-prof) written there.
  const profile = process.env.BENCH_CHAIN_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CHAIN_CPU_PROF}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, fileURLToPath(new URL('./simchain-process.ts', import.meta.url)), `executor bench ${Date.now()}`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n')[0];
      if (output.includes('\n') && line) resolve(line.trim());
    });
    child.on('exit', (code) => reject(new Error(`the chain process exited with ${code}`)));
  });
  return { child, control: createSimulatorControl(url, { timeoutMs: 60_000 }) };
}

async function openTerminal(
  db: Db,
  executor: OutgoingExecutor,
  chain: SimulatorControl,
  expected: number,
  maxPasses = 100_000,
): Promise<number> {
  let passes = 0;
  for (;;) {
    const pass = await executor.runPass();
    if (process.env.BENCH_EXECUTOR_TRACE)
      console.log(
        JSON.stringify({
          signed: pass.signed,
          confirmed: pass.confirmed,
          timings: Object.fromEntries(Object.entries(pass.timings).map(([k, v]) => [k, Math.round(v)])),
        }),
      );
    await chain.mine(1);
    passes += 1;
    const row = await db
      .selectFrom('crypto_outgoing_transfers')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', 'in', ['confirmed', 'failed'])
      .executeTakeFirstOrThrow();
    if (Number(row.count) >= expected) return passes;
    if (passes >= maxPasses)
      throw new Error(`not all transfers final after ${passes} passes (${row.count}/${expected})`);
  }
}

export async function runPayoutExecutorBench(
  options: { readonly transfers?: number; readonly racers?: number } = {},
): Promise<PayoutExecutorBenchResult> {
  const transfers = options.transfers ?? envNumber('BENCH_EXECUTOR_TRANSFERS', 5_000);
  const racers = options.racers ?? envNumber('BENCH_EXECUTOR_RACERS', 1_000);
  const database = await createBenchDatabase('executor');
  const handle = await openDatabase({ url: database.url, poolSize: 40 });
  const { child, control: chain } = await startChainProcess();
  const node = createTronNodeClient({ urls: [chain.url], usdtContract: USDT_CONTRACT_MAINNET, timeoutMs: 30_000 });
  // BENCH_EXECUTOR_SIGNING_WORKERS (1 by default; 0 = sign on the executor's thread).
  const signingWorkers = Number(process.env.BENCH_EXECUTOR_SIGNING_WORKERS ?? 1);
  const signing = signingWorkers > 0 ? createSigningPool(signingWorkers) : undefined;
  try {
    await migrate(handle);
    const db = handle.db;
    const key = signingKeyFromMnemonic(generateMnemonic(english, 256));
    await chain.faucet(key.hotWalletAddress, { trxSun: 10n ** 15n, usdt: 10n ** 15n });
    const executor = createOutgoingExecutor({
      db,
      clock: systemClock,
      logger,
      chain: 'tron-sandbox',
      node,
      transferEnergy: createUsdtTransferEnergy(node),
      signingKey: async () => key,
      hotWallet: key.hotWalletAddress,
      usdtContract: USDT_CONTRACT_MAINNET,
      handlers: { payout: reservationHandler },
      trxUsdtRateMicro: 300_000n,
      maxInFlight: 20_000,
      maxAttempts: 5,
      fundsWaitSeconds: 600,
      // Unset: the production default (a dry run for each first-time recipient, so for every random one here);
      // 1: every transfer; 0: none.
      ...(process.env.BENCH_EXECUTOR_DRY_RUN === undefined
        ? {}
        : { dryRunBeforeSigning: process.env.BENCH_EXECUTOR_DRY_RUN === '1' }),
      ...(signing ? { signing } : {}),
    });

    // ---- 1. throughput: enqueue → confirmed ----
    const started = performance.now();
    const ENQUEUE_BATCH = 500;
    for (let start = 0; start < transfers; start += ENQUEUE_BATCH) {
      // As a batch payout of 500 items queues its transfers: one INSERT per transaction.
      await inTransaction(db, (tx) =>
        enqueueOutgoingTransfers(
          tx,
          systemClock,
          Array.from({ length: Math.min(transfers, start + ENQUEUE_BATCH) - start }, (_, offset) => ({
            chain: 'tron-sandbox' as const,
            purpose: 'payout' as const,
            ownerId: `bench_${start + offset}`,
            asset: 'USDT' as const,
            from: { kind: 'hot_wallet' as const },
            to: randomRecipient(),
            amount: 1_000_000n + BigInt(start + offset),
          })),
        ),
      );
    }
    const enqueueSeconds = (performance.now() - started) / 1000;
    const passes = await openTerminal(db, executor, chain, transfers);
    const seconds = (performance.now() - started) / 1000;
    const confirmed = await db
      .selectFrom('crypto_outgoing_transfers')
      .select('status')
      .where('status', '=', 'confirmed')
      .execute();
    if (confirmed.length !== transfers) throw new Error(`${transfers - confirmed.length} transfers did not confirm`);

    // ---- 2. race: 1,000 payouts against one balance ----
    const amountMicro = 10_000_000n;
    const balanceMicro = amountMicro * BigInt(Math.floor(racers / 4)) + amountMicro / 2n; // room for a quarter, and half of one more
    const merchantId = newId('merchant');
    await db
      .insertInto('merchants')
      .values({ id: merchantId, name: 'Race', email: `race-${merchantId}@example.test`, created_at: new Date() })
      .execute();
    const [main, hotWallet] = await inTransaction(db, (tx) =>
      ensureAccounts(tx, systemClock, [
        merchantAccountKey('sandbox', merchantId, 'USDT', 'main'),
        systemAccountKey('sandbox', 'hot_wallet', 'USDT'),
      ]),
    );
    await inTransaction(db, (tx) =>
      transfer(tx, systemClock, {
        id: `bench-fund:${merchantId}`,
        debitAccountId: hotWallet!.id,
        creditAccountId: main!.id,
        amount: balanceMicro,
        type: 'deposit',
        reference: { type: 'deposit', id: merchantId },
      }),
    );
    const outcomes = await Promise.all(
      Array.from({ length: racers }, async (_, index) => {
        const ownerId = `race_${index}`;
        try {
          await inTransaction(db, async (tx) => {
            await reserve(tx, systemClock, {
              id: `bench-reserve:${ownerId}`,
              debitAccountId: main!.id,
              creditAccountId: hotWallet!.id,
              amount: amountMicro,
              type: 'payout',
              reference: { type: 'payout', id: ownerId },
              timeoutSeconds: MAX_TIMEOUT_SECONDS,
            });
            await enqueueOutgoingTransfer(tx, systemClock, {
              chain: 'tron-sandbox',
              purpose: 'payout',
              ownerId,
              asset: 'USDT',
              from: { kind: 'hot_wallet' },
              to: randomRecipient(),
              amount: amountMicro,
            });
          });
          return true;
        } catch (error) {
          if (error instanceof InsufficientFundsError) return false;
          throw error;
        }
      }),
    );
    const accepted = outcomes.filter(Boolean).length;
    const raceRows = await db
      .selectFrom('crypto_outgoing_transfers')
      .select(['id', 'to_address'])
      .where('owner_id', 'like', 'race_%')
      .execute();
    await openTerminal(db, executor, chain, transfers + raceRows.length);
    let sentOnChainMicro = 0n;
    for (const row of raceRows) sentOnChainMicro += await node.getUsdtBalance(row.to_address as TronAddress);
    const ledger = await checkLedgerInvariants(db);
    const overspent =
      BigInt(accepted) * amountMicro > balanceMicro ||
      raceRows.length !== accepted ||
      sentOnChainMicro !== BigInt(accepted) * amountMicro;
    const perSecond = transfers / seconds;
    const anchors =
      perSecond < 500 || process.env.BENCH_EXECUTOR_ANCHORS === '1'
        ? await measureAnchors(node, key, transfers)
        : undefined;
    return {
      ...(anchors ? { anchors } : {}),
      transfers,
      seconds,
      perSecond,
      passes,
      enqueueSeconds,
      race: {
        racers,
        balanceMicro,
        amountMicro,
        accepted,
        refused: racers - accepted,
        sentOnChainMicro,
        overspent,
        ledgerViolations: ledger.violations.length,
      },
      met: perSecond >= 500 && !overspent && ledger.violations.length === 0 && accepted === Math.floor(racers / 4),
    };
  } finally {
    await node.close();
    await signing?.close();
    child.kill('SIGTERM');
    await handle.close();
    await database.drop();
  }
}

/**
 * The floor under the figure: the signatures every transfer needs (the executor signs,
 * the chain recovers; noble, pure JS) and the chain's own intake of transactions that
 * are already signed. Transactions built exactly as the executor builds them.
 */
async function measureAnchors(node: TronNodeClient, key: DepositSigningKey, count: number): Promise<Anchors> {
  const [head, solid] = await Promise.all([node.getHeadBlock(), node.getSolidifiedBlock()]);
  const privateKey = key.hotWalletPrivateKey();
  const common = {
    ...referenceBlockFields(solid.number, solid.id),
    expirationMs: head.timestamp + 60_000,
    timestampMs: head.timestamp,
  };
  const raws = Array.from({ length: count }, (_, index) =>
    encodeTriggerSmartContractRaw({
      ...common,
      ownerAddress: key.hotWalletAddress,
      feeLimitSun: 30_000_000n,
      contractAddress: USDT_CONTRACT_MAINNET,
      data: transferCalldata(randomRecipient(), 1n + BigInt(index)),
    }),
  );
  const txIds = raws.map((raw) => transactionId(raw));
  let mark = performance.now();
  const signatures = txIds.map((txId) => signTransactionId(txId, privateKey));
  const signSeconds = (performance.now() - mark) / 1000;
  mark = performance.now();
  for (const [index, txId] of txIds.entries()) {
    if (recoverSignerAddress(txId, signatures[index]!) !== key.hotWalletAddress)
      throw new Error('anchor: a signature did not recover to the hot wallet');
  }
  const recoverSeconds = (performance.now() - mark) / 1000;
  const hexes = raws.map((raw, index) => bytesToHex(encodeSignedTransaction(raw, [signatures[index]!])));
  mark = performance.now();
  let accepted = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      while (next < count) {
        const index = next++;
        const answer = await node.broadcast({ txId: txIds[index]!, hex: hexes[index]! });
        if (answer.kind === 'accepted') accepted += 1;
      }
    }),
  );
  const intakeSeconds = (performance.now() - mark) / 1000;
  return {
    count,
    signPerSecond: count / signSeconds,
    recoverPerSecond: count / recoverSeconds,
    signAndRecoverPerSecond: count / (signSeconds + recoverSeconds),
    chainIntakePerSecond: count / intakeSeconds,
    chainAccepted: accepted,
  };
}

export function printPayoutExecutorBench(result: PayoutExecutorBenchResult): void {
  console.log(
    `executor throughput: ${result.transfers} USDT transfers enqueue → confirmed in ${result.seconds.toFixed(2)} s = ${result.perSecond.toFixed(0)}/s over ${result.passes} passes, of which enqueuing ${result.enqueueSeconds.toFixed(2)} s (target ≥ 500/s) ${verdict(result.perSecond >= 500)}`,
  );
  const race = result.race;
  console.log(
    `reservation race: ${race.racers} payouts of ${race.amountMicro} micro-USDT against ${race.balanceMicro}: ${race.accepted} accepted, ${race.refused} refused, ` +
      `${race.sentOnChainMicro} sent on chain, ledger violations ${race.ledgerViolations} ${verdict(!race.overspent && race.ledgerViolations === 0)}`,
  );
  const anchors = result.anchors;
  if (anchors) {
    console.log(
      `anchors (${anchors.count} transactions, this machine now): noble sign ${anchors.signPerSecond.toFixed(0)}/s, recover ${anchors.recoverPerSecond.toFixed(0)}/s, ` +
        `sign + recover one after the other ${anchors.signAndRecoverPerSecond.toFixed(0)}/s; the chain's intake of pre-signed transfers over HTTP ` +
        `${anchors.chainIntakePerSecond.toFixed(0)}/s (${anchors.chainAccepted} accepted)`,
    );
  }
  console.log(`uptime: ${uptimeLine()}`);
}

function uptimeLine(): string {
  const [one, five, fifteen] = loadavg();
  return `load average ${one!.toFixed(2)}, ${five!.toFixed(2)}, ${fifteen!.toFixed(2)} on ${availableParallelism()} cores`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runPayoutExecutorBench();
  printPayoutExecutorBench(result);
  process.exitCode = result.race.overspent || result.race.ledgerViolations > 0 ? 1 : 0;
}
