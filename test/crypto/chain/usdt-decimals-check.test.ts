// The start check of the token contract's decimals() against simulated chains
// over HTTP, read by the production node client: 6 lets receiving and sending
// start; a token with 18 decimals (what a wrong PAYGATE_TRON_USDT_CONTRACT looks
// like), an address without a contract, and a node that does not answer keep
// them off and are asked again after a back-off on the injected clock; and the
// chain watcher worker of a gateway whose chain answers 18 records nothing of a
// transfer on that chain, and its outgoing transfer worker signs nothing.
import type { Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import { testCryptoDeps } from '../crypto-deps-support.ts';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { createChainWatcherWorker } from '../../../src/crypto/receiving/receiving-workers.ts';
import {
  DECIMALS_RETRY_FIRST_MS,
  DECIMALS_RETRY_MAX_MS,
  createUsdtDecimalsCheck,
  type UsdtDecimalsCheck,
} from '../../../src/crypto/chain/usdt-decimals-check.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { USDT_CONTRACT_MAINNET, USDT_CONTRACT_NILE } from '../../../src/crypto/tron/trc20-usdt.ts';
import { inTransaction } from '../../../src/db/transaction.ts';
import { enqueueOutgoingTransfer, findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { createOutgoingTransferWorker } from '../../../src/crypto/sending/sending-worker.ts';
import { createMerchant } from '../../../src/merchants/merchant-service.ts';
import { freshAddress, newLog, recordingHandler } from '../sending/executor-support.ts';
import { createTestContext } from '../../support/app.ts';
import { backends } from '../../support/databases.ts';

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function chainServer(usdtDecimals?: number): Promise<SimulatedChainServer> {
  const server = await startSimulatedChainServer({
    seed: `decimals-${usdtDecimals ?? 6}`,
    clock: 'manual',
    ...(usdtDecimals === undefined ? {} : { parameters: { usdtDecimals } }),
  });
  opened.push(server);
  return server;
}

function nodeOf(url: string, usdtContract = USDT_CONTRACT_MAINNET): TronNodeClient {
  const node = createTronNodeClient({ urls: [url], usdtContract, timeoutMs: 5_000, maxAttempts: 1 });
  opened.push(node);
  return node;
}

/** A logger that keeps what the check reports. */
function recordingLogger(): { logger: Logger; lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const record = (level: string) => (_fields: object, message: string) => void lines.push({ level, message });
  const logger = { info: record('info'), warn: record('warn'), error: record('error') } as unknown as Logger;
  return { logger, lines };
}

/**
 * A chain handle whose node the test can switch, as an operator's fix (or a node
 * coming back) would: every answer still comes from a real simulated chain.
 */
function switchableChain(first: TronNodeClient): { check: UsdtDecimalsCheck; use(node: TronNodeClient): void } {
  let current = first;
  return {
    check: createUsdtDecimalsCheck({
      chain: 'tron-live',
      usdtContract: USDT_CONTRACT_MAINNET,
      node: { getUsdtDecimals: () => current.getUsdtDecimals() },
    }),
    use: (node) => void (current = node),
  };
}

describe('the USDT decimals start check', () => {
  it('the simulated contract answers decimals() as configured (a TRC20 token’s uint8), 6 by default', async () => {
    expect(await nodeOf((await chainServer()).url).getUsdtDecimals()).toBe(6);
    expect(await nodeOf((await chainServer(18)).url).getUsdtDecimals()).toBe(18);
  });

  it('a contract answering 6 is confirmed once and never asked again', async () => {
    const clock = new ManualClock(new Date('2026-11-27T00:00:00Z'));
    const { logger, lines } = recordingLogger();
    const chain = switchableChain(nodeOf((await chainServer()).url));
    expect(await chain.check.confirmed(clock, logger)).toBe(true);
    expect(lines).toEqual([{ level: 'info', message: expect.stringContaining('decimals() = 6') }]);
    // Asked no more: even a node answering 18 now does not undo the confirmation.
    chain.use(nodeOf((await chainServer(18)).url));
    expect(await chain.check.confirmed(clock, logger)).toBe(true);
    expect(lines).toHaveLength(1);
  });

  it('a token with 18 decimals keeps receiving and sending off, is asked again only after the back-off, and a fix is picked up then', async () => {
    const clock = new ManualClock(new Date('2026-11-27T00:00:00Z'));
    const { logger, lines } = recordingLogger();
    const chain = switchableChain(nodeOf((await chainServer(18)).url));
    expect(await chain.check.confirmed(clock, logger)).toBe(false);
    expect(lines).toEqual([{ level: 'error', message: expect.stringContaining('answers decimals() = 18, not 6') }]);
    expect(lines[0]!.message).toContain('PAYGATE_TRON_USDT_CONTRACT');
    // Within the back-off nothing is asked, whatever the node would say now.
    chain.use(nodeOf((await chainServer()).url));
    clock.advance(DECIMALS_RETRY_FIRST_MS - 1);
    expect(await chain.check.confirmed(clock, logger)).toBe(false);
    expect(lines).toHaveLength(1);
    clock.advance(1);
    expect(await chain.check.confirmed(clock, logger)).toBe(true);
    expect(lines.at(-1)).toEqual({ level: 'info', message: expect.stringContaining('decimals() = 6') });
  });

  it('an address without a contract ("No contract or not a valid smart contract") keeps them off', async () => {
    const clock = new ManualClock(new Date('2026-11-27T00:00:00Z'));
    const { logger, lines } = recordingLogger();
    // The simulated chain runs mainnet's USDT address only: Nile's is no contract there, as on a java-tron node.
    const node = nodeOf((await chainServer()).url, USDT_CONTRACT_NILE);
    await expect(node.getUsdtDecimals()).rejects.toThrow(/No contract or not a valid smart contract/);
    const check = createUsdtDecimalsCheck({ chain: 'tron-live', usdtContract: USDT_CONTRACT_NILE, node });
    expect(await check.confirmed(clock, logger)).toBe(false);
    expect(lines).toEqual([{ level: 'warn', message: expect.stringContaining('could not be asked') }]);
  });

  it('a node that does not answer: no crash, asked again after 1 s, 2 s, 4 s … at most 60 s apart, and confirmed once one answers 6', async () => {
    const clock = new ManualClock(new Date('2026-11-27T00:00:00Z'));
    const { logger, lines } = recordingLogger();
    const gone = await chainServer();
    const url = gone.url;
    await gone.close();
    const chain = switchableChain(nodeOf(url));
    const asked = () => lines.filter((line) => line.level === 'warn').length;
    expect(await chain.check.confirmed(clock, logger)).toBe(false);
    expect(asked()).toBe(1);
    let delayMs = DECIMALS_RETRY_FIRST_MS;
    for (let attempt = 2; attempt <= 9; attempt++) {
      clock.advance(delayMs - 1);
      expect(await chain.check.confirmed(clock, logger)).toBe(false);
      expect(asked()).toBe(attempt - 1);
      clock.advance(1);
      expect(await chain.check.confirmed(clock, logger)).toBe(false);
      expect(asked()).toBe(attempt);
      delayMs = Math.min(delayMs * 2, DECIMALS_RETRY_MAX_MS);
    }
    expect(delayMs).toBe(DECIMALS_RETRY_MAX_MS);
    chain.use(nodeOf((await chainServer()).url));
    clock.advance(DECIMALS_RETRY_MAX_MS);
    expect(await chain.check.confirmed(clock, logger)).toBe(true);
  });
});

describe.each(backends)('the chain watcher worker of a chain whose token answers 18 decimals, on %s', (backend) => {
  it('records nothing of a transfer on that chain: no deposit, no cursor, no webhook', async () => {
    const server = await chainServer(18);
    const { context, clock, database } = await createTestContext(backend, { config: { sandboxChainUrl: server.url } });
    opened.push(database);
    const deps = testCryptoDeps(context);
    opened.push(deps);
    const merchant = await createMerchant(context, {
      name: 'Decimals shop',
      email: `decimals-${process.pid}-${backend}@example.test`,
      mode: 'sandbox',
    });
    const shop = { shopId: merchant.shop_id, mode: 'sandbox' as const };
    const { invoice } = await createInvoice(deps, shop, { external_id: 'decimals-18', amount: '5', network: 'TRC20' });
    // 5 × 10^6 units of an 18-decimals token: 0.000000000005 of it, read as 5 USDT without the check.
    expect(server.chain.sendUsdt({ to: tronAddress(invoice.address), amount: 5_000_000n }).result).toBe(true);
    server.chain.mine(server.chain.parameters.solidityDepth + 1);

    const worker = createChainWatcherWorker(deps);
    expect(await worker.runOnce()).toBe(0);
    clock.advance(DECIMALS_RETRY_MAX_MS);
    expect(await worker.runOnce()).toBe(0);
    expect(await context.db.selectFrom('crypto_deposits').select('id').execute()).toEqual([]);
    expect(await context.db.selectFrom('crypto_chain_cursors').select('chain').execute()).toEqual([]);
    expect(
      await context.db.selectFrom('webhook_events').select('id').where('shop_id', '=', shop.shopId).execute(),
    ).toEqual([]);
    await worker.stop();
  });

  it('the outgoing transfer worker signs nothing: a queued payout stays queued, the recipient gets nothing', async () => {
    const server = await chainServer(18);
    const { context, clock, database } = await createTestContext(backend, { config: { sandboxChainUrl: server.url } });
    opened.push(database);
    const deps = testCryptoDeps(context);
    opened.push(deps);
    const to = freshAddress();
    const transfer = await inTransaction(context.db, (tx) =>
      enqueueOutgoingTransfer(tx, clock, {
        chain: 'tron-sandbox',
        purpose: 'payout',
        ownerId: 'po_decimals',
        asset: 'USDT',
        from: { kind: 'hot_wallet' },
        to,
        amount: 9_000_000n,
      }),
    );
    const log = newLog();
    const worker = createOutgoingTransferWorker(deps, { payout: recordingHandler(log) });
    expect(await worker.runOnce()).toBe(0);
    clock.advance(DECIMALS_RETRY_MAX_MS);
    expect(await worker.runOnce()).toBe(0);
    expect(await findOutgoingTransfer(context.db, transfer.id)).toMatchObject({ status: 'queued', txId: null });
    expect(await context.db.selectFrom('crypto_outgoing_attempts').select('transfer_id').execute()).toEqual([]);
    server.chain.mine(1);
    expect(server.chain.state.usdtBalance(to)).toBe(0n);
    expect(log.submitted).toEqual([]);
    await worker.stop();
  });
});
