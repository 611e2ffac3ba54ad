// `npm run bench:crypto`: crypto receiving on PostgreSQL, three targets.
//  (a) watcher: one block of BLOCK_TRANSFERS real signed USDT transfers (OURS_PER_BLOCK of
//      them to invoice addresses of ours) against WATCHED_ADDRESSES watched addresses
//      (bulk-inserted with generate_series): the time from a watcher pass's start to the
//      block recorded (scan over HTTP with the production node client, deposits recorded
//      with their pending ledger credits, cursor moved), per block, after one untimed warm-up
//      block. Target <= 300 ms.
//  (b) deposits credited per second end to end: CREDIT_BLOCKS such blocks, all final, caught
//      up by one watcher from scratch (scan, record, settle: credited, invoices paid, webhooks
//      in the outbox). Target >= 1,000/s, and >= 0.5 of a bare-SQL baseline measured in the
//      same run on the same server: per block, one transaction of set-based statements doing
//      the same rows' work (deposit rows inserted, then marked credited; ledger transfers
//      reserved and posted with their history rows; account totals updated; outbox events and
//      deliveries) on copies of the tables (LIKE … INCLUDING ALL), through `pg`.
//  (c) POST /v1/crypto/invoices through the whole gateway (`paygate serve`, a distinct
//      external_id per request) at 50 connections against the anchor route of
//      bench/payments.ts (Fastify, one INSERT … RETURNING through a `pg` Pool of 20), in
//      alternating phases; target ratio >= 0.5, zero errors. The gateway keeps a pool of
//      BENCH_CRYPTO_ADDRESS_POOL deposit addresses derived ahead (PAYGATE_ADDRESS_POOL_SIZE,
//      docs/crypto.md), and the phases start once its worker has filled it; with
//      BENCH_CRYPTO_ADDRESS_POOL=0 every invoice derives its address inline.
// The simulated chain, in a process of its own (bench/crypto-chain-process.ts) served over
// loopback HTTP as a node is, builds the blocks from real signed transactions through its
// node intake; signing is not timed.
//   BENCH_CRYPTO_WATCHED (1,000,000), BENCH_CRYPTO_BLOCK_TRANSFERS (1,000), BENCH_CRYPTO_OURS (300),
//   BENCH_CRYPTO_SCAN_BLOCKS (5), BENCH_CRYPTO_CREDIT_BLOCKS (10), BENCH_DURATION_S (10),
//   BENCH_WARMUP_S (3), BENCH_PAIRS (2), BENCH_CONNECTIONS (50), BENCH_DATABASE_URL,
//   BENCH_CRYPTO_ADDRESS_POOL (120,000), BENCH_CRYPTO_SKIP_WATCHER / BENCH_CRYPTO_SKIP_INVOICES (run one part).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ChainReply, ChainRequest } from './crypto-chain-process.ts';
import { sql } from 'kysely';
import pg from 'pg';
import { Registry } from 'prom-client';
import { alternate, type AlternatingOutcome } from './alternating-phases.ts';
import { startAnchor } from './anchors/anchor-process.ts';
import { createBenchDatabase } from './bench-database.ts';
import { createBenchMerchant, gatewaySetup, startGateway } from './gateway-process.ts';
import { cpuSecondsOf } from './proc-stat.ts';
import { measurePostgresCpu } from './server-cpu.ts';
import { envNumber, verdict } from './verdict.ts';
import { ManualClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { createChainWatcher, type WatcherStep } from '../src/crypto/receiving/chain-watcher.ts';
import { createCryptoChain } from '../src/crypto/chain/crypto-chain.ts';
import { closeModules, createModules } from '../src/modules.ts';
import { createAddressPool } from '../src/crypto/receiving/address-pool.ts';
import { createInvoice } from '../src/crypto/receiving/invoice-service.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { createLogger } from '../src/logger.ts';
import { DependencyHealth } from '../src/health/dependency-health.ts';
import { throwawayKeyring } from '../src/kms/keyring.ts';
import { createMerchant } from '../src/merchants/merchant-service.ts';
import { updateShopWebhookSettings } from '../src/webhooks/webhook-repository.ts';

const WATCHED = envNumber('BENCH_CRYPTO_WATCHED', 1_000_000);
const BLOCK_TRANSFERS = envNumber('BENCH_CRYPTO_BLOCK_TRANSFERS', 1_000);
const OURS = envNumber('BENCH_CRYPTO_OURS', 300);
const SCAN_BLOCKS = envNumber('BENCH_CRYPTO_SCAN_BLOCKS', 5);
const CREDIT_BLOCKS = envNumber('BENCH_CRYPTO_CREDIT_BLOCKS', 10);
/** Blocks recorded before (a) and not timed (the watcher's first recording pays for JIT and cold plans). */
const WARMUP_BLOCKS = 1;
const DURATION_S = envNumber('BENCH_DURATION_S', 10);
const WARMUP_S = envNumber('BENCH_WARMUP_S', 3);
const PAIRS = envNumber('BENCH_PAIRS', 2);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50);
const SCAN_TARGET_MS = 300;
if (WATCHED < envNumber('BENCH_CRYPTO_CREDIT_BLOCKS', 10) * OURS)
  throw new Error(
    'BENCH_CRYPTO_WATCHED must be at least BENCH_CRYPTO_CREDIT_BLOCKS × BENCH_CRYPTO_OURS (the baseline uses watched addresses)',
  );
const CREDITS_TARGET_PER_S = 1_000;
const RATIO_TARGET = 0.5;
/** 0 turns the pool off (every invoice derives its address inline). */
const ADDRESS_POOL =
  process.env.BENCH_CRYPTO_ADDRESS_POOL === '0' ? 0 : envNumber('BENCH_CRYPTO_ADDRESS_POOL', 120_000);
const INVOICE_MICRO = 10_000_000n;

const out = (text: string) => process.stdout.write(text);
const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

type ChainCommand = DistributiveOmit<ChainRequest, 'id'>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** The simulated chain in its own process (bench/crypto-chain-process.ts), driven over IPC. */
async function startChainProcess(): Promise<{
  url: string;
  solidityDepth: number;
  request(command: ChainCommand): Promise<number>;
  stop(): void;
  pid: number;
}> {
  const child = fork(fileURLToPath(new URL('./crypto-chain-process.ts', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve: (head: number) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  const ready = await new Promise<{ url: string; solidityDepth: number }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { url: string; solidityDepth: number }));
    child.once('exit', (code) => reject(new Error(`the chain process exited ${code}`)));
  });
  child.on('message', (message) => {
    const reply = message as ChainReply;
    const waiter = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.ok) waiter?.resolve(reply.head);
    else waiter?.reject(new Error(reply.error));
  });
  return {
    ...ready,
    request: (command) =>
      new Promise<number>((resolve, reject) => {
        nextId += 1;
        waiting.set(nextId, { resolve, reject });
        child.send({ ...command, id: nextId });
      }),
    stop: () => child.disconnect(),
    pid: child.pid!,
  };
}

interface WatcherFigures {
  readonly scanMs: number[];
  readonly credited: number;
  readonly creditSeconds: number;
  readonly baselinePerSecond: number;
}

async function watcherBench(): Promise<WatcherFigures> {
  const database = await createBenchDatabase('crypto');
  const config = {
    ...loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', PAYGATE_DB_POOL_SIZE: '20' }),
    publicUrl: 'http://paygate.bench',
  };
  const handle = await openDatabase({ url: database.url, poolSize: 20, timeouts: config.databaseTimeouts });
  await migrate(handle);
  const clock = new ManualClock(new Date());
  const logger = createLogger(config);
  const context: AppContext = {
    db: handle.db,
    backend: 'postgres',
    clock,
    config,
    metrics: new Registry(),
    logger,
    health: new DependencyHealth(logger),
    keyring: throwawayKeyring(),
  };
  const chain = await startChainProcess();
  const cryptoChain = createCryptoChain({
    config: { ...config, sandboxChainUrl: chain.url },
    dataDir: undefined,
    logger,
    sandboxClock: 'manual',
  });
  const modules = createModules(context, { chain: cryptoChain });
  const deps = { ...context, chain: modules.chain, addressPool: createAddressPool() };
  try {
    const access = await cryptoChain.forMode('sandbox');
    const merchant = await createMerchant(context, {
      name: 'Bench crypto shop',
      email: `bench-${randomBytes(4).toString('hex')}@example.test`,
      mode: 'sandbox',
    });
    const shop = { shopId: merchant.shop_id, mode: 'sandbox' as const };
    // A shop with a webhook URL, as a real one has: every event also gets its delivery row.
    await updateShopWebhookSettings(handle.db, shop.shopId, { webhook_url: 'https://merchant.example/hook' });

    // One untimed block first: a long-running watcher's recording path is warm (JIT, plans, caches), as in
    // the other benches' discarded warm-up phases.
    const totalBlocks = WARMUP_BLOCKS + SCAN_BLOCKS + CREDIT_BLOCKS;
    let start = process.hrtime.bigint();
    const addresses: string[] = [];
    for (let index = 0; index < totalBlocks * OURS; index += 8) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(8, totalBlocks * OURS - index) }, (_, offset) =>
          createInvoice(deps, shop, { external_id: `bench-${index + offset}`, amount: '10', network: 'TRC20' }).then(
            (created) => created.invoice.address,
          ),
        ),
      );
      addresses.push(...batch);
    }
    out(`invoices: ${addresses.length} created in ${(elapsedMs(start) / 1000).toFixed(1)} s\n`);

    // 1,000,000 watched addresses, as a long-running gateway accumulates them; none receives anything here.
    // Inserted after the invoices' real ones, at indexes above them: the key check (assertKeyOfDatabase)
    // reads the key's first address, which must be one it derived.
    start = process.hrtime.bigint();
    await sql`insert into crypto_addresses (address, key_id, derivation_index, shop_id, purpose, created_at)
      select 'W' || lpad(i::text, 33, '0'), 'sandbox', 1000000000 + i, ${shop.shopId}, 'wallet', now()
      from generate_series(1, ${WATCHED}::int4) as i`.execute(handle.db);
    // A gateway accumulates these rows over months, and autovacuum has long since visited them: vacuumed
    // and checkpointed here, so the measured blocks do not share the machine with that upkeep (an
    // autovacuum of a million fresh rows landing inside (b) made single runs 40 % slower).
    await sql`vacuum analyze crypto_addresses`.execute(handle.db);
    await sql`checkpoint`.execute(handle.db);
    out(`watched addresses: ${WATCHED} inserted in ${(elapsedMs(start) / 1000).toFixed(1)} s\n`);

    /** One block: OURS transfers to our invoice addresses, the rest to strangers (built, signed and mined by the chain's process). */
    const produceBlock = (blockIndex: number) =>
      chain.request({
        kind: 'block',
        ours: addresses.slice(blockIndex * OURS, (blockIndex + 1) * OURS),
        oursMicro: INVOICE_MICRO.toString(),
        transfers: BLOCK_TRANSFERS,
      });

    // The watcher starts at the chain's head (its cursor starts at most 100 blocks back).
    let stepAt: bigint | undefined;
    // Where a pass's time goes, per step reached (BENCH_CRYPTO_STEPS=1 prints it for (b)).
    const stepTotals = new Map<string, number>();
    let lastStep = process.hrtime.bigint();
    let creditStartAt = lastStep;
    const timeline: string[] = [];
    const onStep = (step: WatcherStep) => {
      const now = process.hrtime.bigint();
      timeline.push(`${step}@${Math.round(Number(now - creditStartAt) / 1e6)}`);
      if (step === 'after-record') stepAt = now;
      stepTotals.set(step, (stepTotals.get(step) ?? 0) + Number(now - lastStep) / 1e6);
      lastStep = now;
    };
    const watcher = createChainWatcher({ db: handle.db, clock, logger, access, onStep });
    await chain.request({ kind: 'mine', count: 1 });
    await watcher.runPass();

    // Warm-up: one block recorded the same way, not timed.
    for (let blockIndex = 0; blockIndex < WARMUP_BLOCKS; blockIndex += 1) {
      await produceBlock(blockIndex);
      if ((await watcher.runPass()).depositsSeen !== OURS) throw new Error('the warm-up pass did not see its deposits');
    }
    // (a) one block at a time: the pass's time until the block is recorded.
    const scanMs: number[] = [];
    for (let blockIndex = WARMUP_BLOCKS; blockIndex < WARMUP_BLOCKS + SCAN_BLOCKS; blockIndex += 1) {
      await produceBlock(blockIndex);
      stepAt = undefined;
      const passStart = process.hrtime.bigint();
      const pass = await watcher.runPass();
      if (pass.depositsSeen !== OURS || stepAt === undefined)
        throw new Error(`scan pass saw ${pass.depositsSeen} deposits`);
      scanMs.push(Number(stepAt - passStart) / 1e6);
    }
    // Those deposits settle before (b) starts, so (b) counts only its own.
    await chain.request({ kind: 'mine', count: chain.solidityDepth + 1 });
    while ((await watcher.runPass()).depositsSettled > 0 || (await pendingDeposits(context)) > 0);

    // (b) CREDIT_BLOCKS blocks, all final, caught up from scratch.
    const signStart = process.hrtime.bigint();
    for (let blockIndex = WARMUP_BLOCKS + SCAN_BLOCKS; blockIndex < totalBlocks; blockIndex += 1)
      await produceBlock(blockIndex);
    await chain.request({ kind: 'mine', count: chain.solidityDepth + 1 });
    out(
      `blocks for (b): ${CREDIT_BLOCKS} × ${BLOCK_TRANSFERS} transfers signed and mined in ${(elapsedMs(signStart) / 1000).toFixed(1)} s (not timed)\n`,
    );
    const creditedBefore = await creditedDeposits(context);
    const profile = process.env.BENCH_CRYPTO_PROFILE ? await startProfile() : undefined;
    const cpuBefore = process.cpuUsage();
    const chainCpuBefore = cpuSecondsOf(chain.pid);
    const postgresCpu = measurePostgresCpu();
    const creditStart = process.hrtime.bigint();
    stepTotals.clear();
    timeline.length = 0;
    lastStep = creditStartAt = creditStart;
    for (let pass = 0; pass < 100; pass += 1) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0) break;
    }
    const creditSeconds = elapsedMs(creditStart) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    await profile?.(process.env.BENCH_CRYPTO_PROFILE!);
    if (process.env.BENCH_CRYPTO_STEPS) {
      out(
        `(b) time until each step, ms: ${JSON.stringify(Object.fromEntries([...stepTotals].map(([step, ms]) => [step, Math.round(ms)])))}\n`,
      );
      out(`(b) steps in order, ms from the start: ${timeline.join(' ')}\n`);
      out(
        `(b) the watcher's process: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms of CPU in ${(creditSeconds * 1000).toFixed(0)} ms\n`,
      );
      const postgresMicros = postgresCpu();
      out(
        `(b) the chain's process: ${((cpuSecondsOf(chain.pid) - chainCpuBefore) * 1000).toFixed(0)} ms of CPU; PostgreSQL: ${postgresMicros === undefined ? 'unknown' : (postgresMicros / 1000).toFixed(0)} ms\n`,
      );
    }
    const credited = (await creditedDeposits(context)) - creditedBefore;
    if (credited !== CREDIT_BLOCKS * OURS) throw new Error(`credited ${credited} of ${CREDIT_BLOCKS * OURS} deposits`);

    const baselinePerSecond = await bareSqlBaseline(
      database.url,
      { shopId: shop.shopId, merchantId: merchant.merchant_id },
      CREDIT_BLOCKS,
      OURS,
    );
    return { scanMs, credited, creditSeconds, baselinePerSecond };
  } finally {
    await closeModules(modules.list);
    chain.stop();
    await handle.close();
    await database.drop();
  }
}

async function creditedDeposits(context: AppContext): Promise<number> {
  const row = await context.db
    .selectFrom('crypto_deposits')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'credited')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function pendingDeposits(context: AppContext): Promise<number> {
  const row = await context.db
    .selectFrom('crypto_deposits')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('status', '=', 'confirming')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The same rows' work in bare SQL through `pg`, one transaction per block of `perBlock`
 * deposits, on copies of the tables (LIKE … INCLUDING ALL: same columns, checks, indexes;
 * plus their foreign keys, to each other's copies or to the real shops, merchants, addresses),
 * as the gateway writes them per deposit: the deposit inserted, then marked credited; the
 * pending credit (two history rows) and its post (one); both accounts' totals updated at each
 * step; the invoice updated when seen and when paid; three outbox events (invoice confirming,
 * balance funded, invoice paid), each with its delivery. Returns deposits per second.
 */
async function bareSqlBaseline(
  url: string,
  owner: { shopId: string; merchantId: string },
  blocks: number,
  perBlock: number,
): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = [
      'crypto_deposits',
      'crypto_invoices',
      'ledger_accounts',
      'ledger_transfers',
      'ledger_operations',
      'webhook_events',
      'webhook_deliveries',
    ];
    for (const table of tables) await client.query(`create table bare_${table} (like ${table} including all)`);
    // LIKE copies no foreign keys; the real tables check theirs on every row, so the copies do too
    // (to each other's copies, or to the real shops, merchants and watched addresses).
    const foreignKeys = await client.query<{ table: string; name: string; definition: string }>(
      `select conrelid::regclass::text as table, conname as name, pg_get_constraintdef(oid) as definition
         from pg_constraint where contype = 'f' and conrelid::regclass::text = any($1::text[])`,
      [tables],
    );
    for (const key of foreignKeys.rows) {
      const definition = key.definition.replace(
        /REFERENCES (\w+)\(/,
        (_, table: string) => `REFERENCES ${tables.includes(table) ? `bare_${table}` : table}(`,
      );
      await client.query(`alter table bare_${key.table} add constraint ${key.name} ${definition}`);
    }
    await client.query(
      `insert into bare_ledger_accounts (id, book, merchant_id, currency, kind, shard, debits_must_not_exceed_credits, created_at)
       values ('acc_main', 'sandbox', $1, 'USDT', 'main', 0, true, now()), ('acc_hot', 'sandbox', null, 'USDT', 'hot_wallet', 0, false, now())`,
      [owner.merchantId],
    );
    const amount = INVOICE_MICRO.toString();
    const total = (INVOICE_MICRO * BigInt(perBlock)).toString();
    const events = (ids: string[], type: string, tag: string) =>
      client.query(
        `with e as (
           insert into bare_webhook_events (id, shop_id, type, payload, destination_url, created_at)
           select 'evt_${tag}_' || id, $4, $2, json_build_object('id', id, 'type', $2::text, 'amount', $3::text)::text, 'https://merchant.example/hook', now()
           from unnest($1::text[]) as id returning id
         )
         insert into bare_webhook_deliveries (id, event_id, shop_id, url, max_attempts, next_attempt_at, created_at, updated_at)
         select 'dlv_' || e.id, e.id, $4, 'https://merchant.example/hook', 8, now(), now(), now() from e`,
        [ids, type, amount, owner.shopId],
      );
    // Timed: recording and settling, not the invoices' creation.
    let baselineMs = 0;
    for (let block = 0; block < blocks; block += 1) {
      const ids = Array.from({ length: perBlock }, (_, index) => `${block}-${index}-${randomBytes(6).toString('hex')}`);
      // Watched addresses (crypto_addresses rows) that nothing else uses: the invoices' and deposits' foreign keys hold.
      const addresses = ids.map(
        (_, index) => `W${String(1 + ((block * perBlock + index) % WATCHED)).padStart(33, '0')}`,
      );
      await client.query('begin');
      // The invoices exist before their deposits (not timed in the gateway either).
      await client.query(
        `insert into bare_crypto_invoices (id, shop_id, external_id, network, amount_micro, address, status, lifetime_s, expires_at, created_at, updated_at)
         select 'inv_' || id, $3, id, 'TRC20', $2::int8, address, 'pending', 3600, now() + interval '1 hour', now(), now()
         from unnest($1::text[], $4::text[]) as v(id, address)`,
        [ids, amount, owner.shopId, addresses],
      );
      await client.query('commit');
      const recordStart = process.hrtime.bigint();
      await client.query('begin');
      await client.query(
        `insert into bare_crypto_deposits (id, chain, shop_id, address, invoice_id, wallet_id, tx_id, log_index, block_number, block_id, from_address, amount_micro, status, seen_at, credit_round)
         select 'dep_' || id, 'tron-sandbox', $4, address, 'inv_' || id, null, encode(sha256(id::bytea), 'hex'), 0, $2::int8,
                encode(sha256(('block' || $2::int8::text)::bytea), 'hex'), rpad('from', 34, 'x'), $3::int8, 'confirming', now(), 1
         from unnest($1::text[], $5::text[]) as v(id, address)`,
        [ids, block, amount, owner.shopId, addresses],
      );
      await client.query(
        `with t as (
           insert into bare_ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type, reference_type, reference_id, status, pending_id, chain_id, created_at)
           select 'trf_r_' || id, 'crypto-deposit:' || id || ':1', 'acc_hot', 'acc_main', $2::int8, 'USDT', 'deposit', 'deposit', id, 'pending', null, 'trf_r_' || id, now()
           from unnest($1::text[]) as id returning id
         )
         insert into bare_ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at)
          select 'op_' || t.id || s.side, s.account, t.id, t.id, s.delta, 0, now() from t, (values ('d', 'acc_hot', -$2::int8), ('c', 'acc_main', 0::int8)) as s(side, account, delta)`,
        [ids, amount],
      );
      await client.query(
        `update bare_ledger_accounts set debits_pending = debits_pending + (case when id = 'acc_hot' then $1::int8 else 0 end),
           credits_pending = credits_pending + (case when id = 'acc_main' then $1::int8 else 0 end) where id in ('acc_hot', 'acc_main')`,
        [total],
      );
      await client.query(
        `update bare_crypto_invoices set status = 'confirming', updated_at = now() where id = any($1::text[])`,
        [ids.map((id) => `inv_${id}`)],
      );
      await events(ids, 'crypto.invoice.updated', 'seen');
      await client.query('commit');
      await client.query('begin');
      await client.query(`select id from bare_crypto_deposits where id = any($1::text[]) for update`, [
        ids.map((id) => `dep_${id}`),
      ]);
      await client.query(
        `update bare_crypto_deposits set status = 'credited', final_at = now() where id = any($1::text[])`,
        [ids.map((id) => `dep_${id}`)],
      );
      await client.query(
        `with t as (
           insert into bare_ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency, type, reference_type, reference_id, status, pending_id, chain_id, created_at)
           select 'trf_p_' || id, 'crypto-deposit:' || id, 'acc_hot', 'acc_main', $2::int8, 'USDT', 'deposit', 'deposit', id, 'posted', 'trf_r_' || id, 'trf_p_' || id, now()
           from unnest($1::text[]) as id returning id
         )
         insert into bare_ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at)
         select 'op_' || t.id, 'acc_main', t.id, 'trf_r_' || substr(t.id, 7), $2::int8, 0, now() from t`,
        [ids, amount],
      );
      await client.query(
        `update bare_ledger_accounts set debits_pending = debits_pending - (case when id = 'acc_hot' then $1::int8 else 0 end),
           debits_posted = debits_posted + (case when id = 'acc_hot' then $1::int8 else 0 end),
           credits_pending = credits_pending - (case when id = 'acc_main' then $1::int8 else 0 end),
           credits_posted = credits_posted + (case when id = 'acc_main' then $1::int8 else 0 end) where id in ('acc_hot', 'acc_main')`,
        [total],
      );
      await client.query(
        `update bare_crypto_invoices set status = 'paid', paid_micro = amount_micro, paid_at = now(), updated_at = now() where id = any($1::text[])`,
        [ids.map((id) => `inv_${id}`)],
      );
      await events(ids, 'crypto.balance.funded', 'funded');
      await events(ids, 'crypto.invoice.updated', 'paid');
      await client.query('commit');
      baselineMs += elapsedMs(recordStart);
    }
    return (blocks * perBlock) / (baselineMs / 1000);
  } finally {
    await client.end();
  }
}

/**
 * The first invoice makes the sandbox key one that derives addresses; then the gateway's
 * worker fills the pool (docs/crypto.md "Address pool") and the phases start once it is full.
 */
async function fillAddressPool(gatewayUrl: string, apiKey: string, databaseUrl: string): Promise<void> {
  const response = await fetch(`${gatewayUrl}/v1/crypto/invoices`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ external_id: 'bench-first', amount: '1', network: 'TRC20' }),
  });
  if (response.status !== 201) throw new Error(`the first invoice: HTTP ${response.status} ${await response.text()}`);
  if (ADDRESS_POOL === 0) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    for (;;) {
      const { rows } = await client.query<{ count: string }>('select count(*) from crypto_address_pool');
      const count = Number(rows[0]!.count);
      if (count >= ADDRESS_POOL) break;
      if (performance.now() - started > 600_000)
        throw new Error(`the address pool holds ${count} of ${ADDRESS_POOL} after 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    out(
      `invoices: address pool of ${ADDRESS_POOL} filled by the gateway's worker in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    // The pool is filled in idle time, and so is the database's upkeep of what the filling wrote (the
    // vacuum autovacuum would run, the checkpoint of its WAL): done here before the phases, not during them.
    await client.query('vacuum analyze crypto_address_pool');
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

/** A CPU profile of this process from now until the returned function writes it (BENCH_CRYPTO_PROFILE=file). */
async function startProfile(): Promise<(path: string) => Promise<void>> {
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (path) => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(path, JSON.stringify(profile));
    session.disconnect();
  };
}

async function invoiceCreationBench(): Promise<AlternatingOutcome> {
  const database = await createBenchDatabase('crypto_invoices');
  const setup = await gatewaySetup('postgres', database.url, { PAYGATE_ADDRESS_POOL_SIZE: String(ADDRESS_POOL) });
  try {
    const merchant = await createBenchMerchant(setup);
    const gateway = await startGateway(setup);
    await fillAddressPool(gateway.url, merchant.api_key, database.url);
    const anchor = await startAnchor(database.url).catch(async (error: unknown) => {
      await gateway.stop();
      throw error;
    });
    try {
      out(`\ninvoices: gateway pid ${gateway.pid} at ${gateway.url}, anchor pid ${anchor.pid} at ${anchor.url}\n`);
      const json = { 'content-type': 'application/json' };
      const token = '__EXTERNAL_ID__';
      return await alternate({
        title: 'POST /v1/crypto/invoices on PostgreSQL',
        anchor: {
          pid: anchor.pid,
          spec: {
            origin: anchor.url,
            method: 'POST',
            paths: ['/anchor/payments'],
            headers: json,
            body: JSON.stringify({
              amount: 1500.5,
              currency: 'RUB',
              order_id: 'bench-order',
              callback_url: 'https://merchant.example/hook',
            }),
            distinctIdempotencyKey: false,
            connections: CONNECTIONS,
          },
        },
        gateway: {
          pid: gateway.pid,
          spec: {
            origin: gateway.url,
            method: 'POST',
            paths: ['/v1/crypto/invoices'],
            headers: { ...json, authorization: `Bearer ${merchant.api_key}` },
            body: JSON.stringify({
              external_id: token,
              amount: '25.5',
              network: 'TRC20',
              callback_url: 'https://merchant.example/hook',
            }),
            uniqueBodyToken: token,
            distinctIdempotencyKey: false,
            connections: CONNECTIONS,
          },
        },
        postgres: true,
        durationS: DURATION_S,
        pairs: PAIRS,
        warmupS: WARMUP_S,
        targets: { ratioAtLeast: RATIO_TARGET },
      });
    } finally {
      await Promise.all([gateway.stop(), anchor.stop()]);
    }
  } finally {
    await setup.cleanUp();
    await database.drop();
  }
}

const watcher = process.env.BENCH_CRYPTO_SKIP_WATCHER ? undefined : await watcherBench();
const invoices = process.env.BENCH_CRYPTO_SKIP_INVOICES ? undefined : await invoiceCreationBench();

out('\nsummary\n');
if (watcher) {
  const scanMedian = median(watcher.scanMs);
  const scanMax = Math.max(...watcher.scanMs);
  const perSecond = watcher.credited / watcher.creditSeconds;
  const ratio = perSecond / watcher.baselinePerSecond;
  out(
    `  (a) watcher: one block of ${BLOCK_TRANSFERS} transfers (${OURS} ours) among ${WATCHED} watched addresses: median ${scanMedian.toFixed(0)} ms, worst ${scanMax.toFixed(0)} ms ` +
      `(${watcher.scanMs.map((ms) => ms.toFixed(0)).join(', ')}) (<= ${SCAN_TARGET_MS})  ${verdict(scanMax <= SCAN_TARGET_MS)}\n`,
  );
  out(
    `  (b) deposits credited end to end: ${watcher.credited} in ${watcher.creditSeconds.toFixed(2)} s = ${perSecond.toFixed(0)}/s (>= ${CREDITS_TARGET_PER_S})  ${verdict(perSecond >= CREDITS_TARGET_PER_S)}\n`,
  );
  out(
    `      bare-SQL baseline ${watcher.baselinePerSecond.toFixed(0)}/s: ratio ${ratio.toFixed(2)} (>= ${RATIO_TARGET})  ${verdict(ratio >= RATIO_TARGET)}\n`,
  );
}
if (invoices) {
  out(
    `  (c) ${invoices.title}: gateway ${invoices.gatewayMean.toFixed(0)} / anchor ${invoices.anchorMean.toFixed(0)} req/s, ratio ${invoices.ratio.toFixed(2)} ` +
      `(min ${invoices.minRatio.toFixed(2)}, >= ${RATIO_TARGET}), errors ${invoices.gatewayErrors}  ${verdict(invoices.met)}\n`,
  );
}
if (invoices && invoices.gatewayErrors > 0) process.exitCode = 1;
