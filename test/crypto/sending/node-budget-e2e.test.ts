// The executor and the chain watcher at the budget of one TronGrid trial key:
// the simulated node serves 15 requests a second and answers the rest with
// HTTP 429 (node-faults.ts `rateLimit`), and the gateway's node client has a
// budget of 15 requests a second for that URL. 100 payouts complete with each
// recipient's chain balance exact, and every deposit is credited once, only
// slower, with no pass failing. The result is decided by the chain and the database alone; the
// test timeout is a guard, no wall-clock limit decides anything.
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInvoice, getInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { depositsOfInvoice } from '../../../src/crypto/receiving/receiving-repository.ts';
import { findOutgoingTransfer, type OutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { tronAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';
import { nodeRequestMetrics } from '../../../src/crypto/tron/node-metrics.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
import { backends } from '../../support/databases.ts';
import {
  creditsOfDeposit,
  expectLedgerSound,
  openReceivingSetup,
  usdtMainBalance,
  type ReceivingSetup,
} from '../receiving/receiving-service-support.ts';
import { enqueuePayout, executorFor, freshAddress, fundHotWallet, newLog } from './executor-support.ts';

const TRIAL_KEY_REQUESTS_PER_SECOND = 15;
const PAYOUTS = 100;
const DEPOSITS = 10;
/** Rounds of (executor pass, watcher pass, blocks) before the test gives up: far more than the work needs. */
const MAX_ROUNDS = 60;

describe.each(backends)('payouts and deposits at 15 requests a second on %s', (backend) => {
  let setup: ReceivingSetup;
  let node: TronNodeClient | undefined;
  const registry = new Registry();
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await node?.close();
    await expectLedgerSound(setup);
    await setup.close();
  });

  it(
    'with the budget at 15 req/s: 100 payouts complete with every recipient paid exactly once, and every deposit is credited once',
    { timeout: 600_000 },
    async () => {
      setup.sandbox.faults.set({ rateLimit: { requestsPerSecond: TRIAL_KEY_REQUESTS_PER_SECOND, answer: 'http429' } });
      node = createTronNodeClient({
        urls: [{ url: setup.sandbox.url, requestsPerSecond: TRIAL_KEY_REQUESTS_PER_SECOND }],
        usdtContract: USDT_CONTRACT_MAINNET,
        onRequest: nodeRequestMetrics(registry),
      });
      expect(await payAndReceive(node, PAYOUTS, DEPOSITS)).toEqual([]);
      // Every request went through the budget; the node's refusals (if any) were ridden out.
      expect(await registry.metrics()).toMatch(
        new RegExp(`paygate_tron_node_requests_total\\{node="${setup.sandbox.url}",outcome="ok"\\} \\d+`),
      );
    },
  );

  /** Payouts and deposits carried to the end through `node`; every outcome checked on chain and in the ledger. Answers the passes that failed. */
  async function payAndReceive(node: TronNodeClient, payoutCount: number, depositCount: number): Promise<string[]> {
    const chain = setup.sandbox.chain;
    fundHotWallet(setup);
    const access = { ...setup.access, node };
    const log = newLog();
    const executor = executorFor(setup, log, { node });
    const watcher = setup.watcher({ access });

    const invoices: { id: string; address: TronAddress; amount: bigint }[] = [];
    for (let index = 0; index < depositCount; index += 1) {
      const amount = BigInt(index + 1) * 1_000_000n;
      const { invoice } = await createInvoice(setup.deps, setup.shop, {
        external_id: `budget-${index}`,
        amount: String(index + 1),
        network: 'TRC20',
      });
      invoices.push({ id: invoice.invoice_id, address: tronAddress(invoice.address), amount });
    }
    const payouts: { transfer: OutgoingTransfer; to: TronAddress; amount: bigint }[] = [];
    for (let index = 0; index < payoutCount; index += 1) {
      const to = freshAddress();
      const amount = 1_000_000n + BigInt(index) * 10_000n;
      payouts.push({ transfer: await enqueuePayout(setup, to, amount), to, amount });
    }
    // Deposits arrive while the payouts go out.
    for (const invoice of invoices)
      expect(chain.sendUsdt({ to: invoice.address, amount: invoice.amount }).result).toBe(true);

    let rounds = 0;
    const passErrors: string[] = [];
    const settled = async () => {
      const statuses = await Promise.all(
        payouts.map(async ({ transfer }) => (await findOutgoingTransfer(setup.context.db, transfer.id))!.status),
      );
      const credited = await Promise.all(
        invoices.map(async (invoice) => (await getInvoice(setup.deps, setup.shop.shopId, invoice.id)).status),
      );
      return statuses.every((status) => status === 'confirmed') && credited.every((status) => status === 'paid');
    };
    while (rounds < MAX_ROUNDS && !(await settled())) {
      rounds += 1;
      // A pass that runs out of its wait bound is retried by the worker's next tick, as here.
      await executor.runPass().catch((error: unknown) => passErrors.push(`executor: ${String(error)}`));
      await watcher.runPass().catch((error: unknown) => passErrors.push(`watcher: ${String(error)}`));
      chain.mine(rounds === 1 ? 1 : chain.parameters.solidityDepth + 1);
    }
    expect(await settled()).toBe(true);

    for (const { to, amount } of payouts) expect(chain.state.usdtBalance(to)).toBe(amount);
    expect(log.final.map((transfer) => transfer.status)).toEqual(Array(payoutCount).fill('confirmed'));
    expect(new Set(log.final.map((transfer) => transfer.id)).size).toBe(payoutCount);
    let expectedCredit = 0n;
    for (const invoice of invoices) {
      const [deposit] = await depositsOfInvoice(setup.context.db, invoice.id);
      expect(await creditsOfDeposit(setup, deposit!.id)).toBe(1);
      expectedCredit += invoice.amount;
    }
    expect(await usdtMainBalance(setup)).toBe(expectedCredit);
    return passErrors;
  }
});
