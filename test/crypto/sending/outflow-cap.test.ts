// The hourly outflow cap: what leaves custody in a rolling hour never exceeds
// it; transfers past it wait queued (never fail for it) and are signed once the
// window allows; sweeps-like transfers that stay ours never count.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction } from '../../../src/db/transaction.ts';
import {
  admitWithinCap,
  createOutflowCap,
  OUTFLOW_WINDOW_MS,
  type OutflowCandidate,
} from '../../../src/crypto/sending/outflow-cap.ts';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { attemptsOf } from '../../../src/crypto/sending/sending-repository.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  executorFor,
  freshAddress,
  fundHotWallet,
  mineToFinal,
  newLog,
  recordingHandler,
  type HandlerLog,
} from './executor-support.ts';

const USDT = 1_000_000n;
const payout = (id: string, amount: bigint): OutflowCandidate => ({ id, purpose: 'payout', asset: 'USDT', amount });

describe('admitWithinCap', () => {
  it('admits oldest first while the window has room; the first that does not fit holds every counted one after it', () => {
    const decision = admitWithinCap(
      [payout('a', 4n * USDT), payout('b', 4n * USDT), payout('c', 3n * USDT), payout('d', 1n * USDT)],
      10n * USDT,
      new Map(),
    );
    expect(decision.admitted.map((c) => c.id)).toEqual(['a', 'b']);
    expect(decision.held.map((c) => c.id)).toEqual(['c', 'd']);
    expect(decision.usedMicro).toBe(8n * USDT);
  });

  it('counts what the window already holds', () => {
    const decision = admitWithinCap(
      [payout('a', 3n * USDT), payout('b', 1n * USDT)],
      10n * USDT,
      new Map([['old', 7n * USDT]]),
    );
    expect(decision.admitted.map((c) => c.id)).toEqual(['a']);
    expect(decision.held.map((c) => c.id)).toEqual(['b']);
    expect(decision.usedMicro).toBe(10n * USDT);
  });

  it('a transfer signed again after its first transaction expired is the same money: no new room taken', () => {
    const decision = admitWithinCap(
      [payout('again', 6n * USDT), payout('new', 4n * USDT)],
      10n * USDT,
      new Map([['again', 6n * USDT]]),
    );
    expect(decision.admitted.map((c) => c.id)).toEqual(['again', 'new']);
    expect(decision.usedMicro).toBe(10n * USDT);
  });

  it('transfers that stay in custody (sweeps, gas top-ups, cold storage) always pass and take no room', () => {
    const stays: OutflowCandidate[] = [
      { id: 's', purpose: 'sweep', asset: 'USDT', amount: 50n * USDT },
      { id: 'g', purpose: 'gas_topup', asset: 'TRX', amount: 9_000_000n },
      { id: 'c', purpose: 'cold_storage', asset: 'USDT', amount: 500n * USDT },
    ];
    const decision = admitWithinCap([...stays, payout('p', 10n * USDT)], 10n * USDT, new Map());
    expect(decision.admitted.map((c) => c.id)).toEqual(['s', 'g', 'c', 'p']);
    expect(decision.usedMicro).toBe(10n * USDT);
  });

  it('a transfer larger than the whole cap is stepped over and reported, never signed', () => {
    const decision = admitWithinCap([payout('huge', 11n * USDT), payout('small', 2n * USDT)], 10n * USDT, new Map());
    expect(decision.overCap.map((c) => c.id)).toEqual(['huge']);
    expect(decision.admitted.map((c) => c.id)).toEqual(['small']);
  });
});

describe.each(backends)('the hourly outflow cap in the executor on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const cap = (capMicro: bigint) =>
    createOutflowCap({ db: setup.context.db, chain: 'tron-sandbox', capMicro, logger: setup.context.logger });

  it('holds the transfers past the cap (queued, not failing past the funds wait) and signs them in the next window; the recipients receive each once', async () => {
    fundHotWallet(setup);
    const to = [freshAddress(), freshAddress(), freshAddress()];
    const cold = freshAddress();
    const handler = recordingHandler(log);
    const executor = executorFor(setup, log, {
      outflowCap: cap(10n * USDT),
      fundsWaitSeconds: 60,
      handlers: { payout: handler, cold_storage: handler },
    });
    const payouts = [
      await enqueuePayout(setup, to[0]!, 4n * USDT),
      await enqueuePayout(setup, to[1]!, 4n * USDT),
      await enqueuePayout(setup, to[2]!, 4n * USDT),
    ];
    const coldMove = await enqueuePayout(setup, cold, 300n * USDT, { purpose: 'cold_storage' });

    expect(await executor.runPass()).toMatchObject({ signed: 3, waitingForFunds: 0 });
    const held = (await findOutgoingTransfer(setup.context.db, payouts[2]!.id))!;
    expect(held.status).toBe('queued');
    expect(await attemptsOf(setup.context.db, held.id)).toHaveLength(0);
    expect((await findOutgoingTransfer(setup.context.db, coldMove.id))!.status).toBe('submitted');

    // Well past the funds wait, within the hour: still waiting, never failed.
    setup.clock.advance(59 * 60_000);
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ signed: 0, confirmed: 3, failed: 0 });
    expect((await findOutgoingTransfer(setup.context.db, held.id))!.status).toBe('queued');

    // The first signings leave the window: room for the third.
    setup.clock.advance(60_000 + 1);
    expect(await executor.runPass()).toMatchObject({ signed: 1 });
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    expect(await executor.runPass()).toMatchObject({ confirmed: 1 });
    for (const address of to) expect(setup.sandbox.chain.state.usdtBalance(address)).toBe(4n * USDT);
    expect(setup.sandbox.chain.state.usdtBalance(cold)).toBe(300n * USDT);
    expect(log.final.filter((transfer) => transfer.status === 'confirmed')).toHaveLength(4);
  });

  it('two recording transactions at once cannot both spend the same room (the per-chain lock and the committed window decide)', async () => {
    const outflow = cap(10n * USDT);
    const [first, second] = [
      await enqueuePayout(setup, freshAddress(), 6n * USDT),
      await enqueuePayout(setup, freshAddress(), 6n * USDT),
    ];
    const now = setup.clock.now();
    const claims = await Promise.all(
      [first!, second!].map((transfer) =>
        inTransaction(setup.context.db, async (tx) => {
          const candidate = {
            id: transfer.id,
            purpose: transfer.purpose,
            asset: transfer.asset,
            amount: transfer.amount,
          };
          const allowed = await outflow.claim(tx, [candidate], now);
          await outflow.record(
            tx,
            [candidate].filter((item) => allowed.has(item.id)),
            now,
          );
          return allowed.size;
        }),
      ),
    );
    expect(claims.sort()).toEqual([0, 1]);
    const window = await setup.context.db.selectFrom('crypto_outflow_signings').selectAll().execute();
    expect(window.map((row) => row.amount)).toEqual([6n * USDT]);
    // An hour on, the old signing is forgotten as the next is recorded.
    const later = new Date(now.getTime() + OUTFLOW_WINDOW_MS);
    await inTransaction(setup.context.db, async (tx) => {
      const candidate = { id: second!.id, purpose: second!.purpose, asset: second!.asset, amount: second!.amount };
      expect((await outflow.claim(tx, [candidate], later)).size).toBe(1);
      await outflow.record(tx, [candidate], later);
    });
    expect(
      (await setup.context.db.selectFrom('crypto_outflow_signings').select('transfer_id').execute()).map(
        (row) => row.transfer_id,
      ),
    ).toEqual([second!.id]);
  });
});
