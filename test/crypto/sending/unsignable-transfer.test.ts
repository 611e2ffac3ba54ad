// A transfer the signing key cannot sign (the key does not derive its sending
// address) fails alone: the rest of its chunk is signed and confirmed; it is
// never broadcast, held queued and unsigned, rechecked only every
// UNSIGNABLE_RECHECK_MS (not every pass), and the operator is told (an error
// line with its id, the paygate_outgoing_transfers_unsignable_total counter).
// One holding a merchant's reservation waits, then fails signer_unavailable.
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendingMetrics } from '../../../src/crypto/sending/sending-metrics.ts';
import { attemptsOf, findTransfer } from '../../../src/crypto/sending/sending-repository.ts';
import { UNSIGNABLE_RECHECK_MS } from '../../../src/crypto/sending/unsignable-transfers.ts';
import { backends } from '../../support/databases.ts';
import { capturingLogger, LEVEL, type LogLine } from '../../support/log-capture.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';
import {
  enqueuePayout,
  enqueuePayouts,
  executorFor,
  freshAddress,
  fundHotWallet,
  mineToFinal,
  newLog,
  type HandlerLog,
} from './executor-support.ts';

const HELD_MESSAGE = 'outgoing transfers held unsigned';

describe.each(backends)('a transfer the key cannot sign on %s', (backend) => {
  let setup: ReceivingSetup;
  let log: HandlerLog;
  let lines: LogLine[];
  let logger: ReturnType<typeof capturingLogger>['logger'];
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
    log = newLog();
    ({ logger, lines } = capturingLogger());
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  const heldLines = (transferId: string) =>
    lines.filter(
      (line) =>
        line.level === LEVEL.error &&
        line.msg.startsWith(HELD_MESSAGE) &&
        JSON.stringify(line.transfers).includes(transferId),
    );

  it('a sweep of an address no key derives is held alone: the payouts of its chunk are signed and confirmed, it is never broadcast nor retried every pass', async () => {
    fundHotWallet(setup);
    // Another key's address, recorded as if our key's index 5 derived it (a restored database, a rotated key).
    const foreign = freshAddress();
    setup.sandbox.chain.faucet(foreign, { trxSun: 50_000_000n, usdt: 30_000_000n });
    const sweep = await enqueuePayout(setup, setup.access.addressKey.hotWalletAddress, 30_000_000n, {
      purpose: 'sweep',
      ownerId: 'swp_foreign',
      from: { kind: 'deposit_address', address: foreign, derivationIndex: 5 },
    });
    setup.clock.advance(1_000);
    const recipients = [freshAddress(), freshAddress(), freshAddress()];
    const payouts = await enqueuePayouts(setup, recipients, 2_000_000n);
    const executor = executorFor(setup, log, { logger, fundsWaitSeconds: 60 });
    const registry = new Registry();
    const metrics = sendingMetrics(registry);

    const first = await executor.runPass();
    metrics.recordPass('tron-sandbox', first);
    expect(first).toMatchObject({ signed: 3, broadcast: 3, unsignable: 1, failed: 0 });
    const held = (await findTransfer(setup.context.db, sweep.id))!;
    expect(held).toMatchObject({ status: 'queued', tx_id: null, attempts: 0, error_code: null });
    expect(held.unsignable_checked_at).toEqual(setup.clock.now());
    const [line] = heldLines(sweep.id);
    expect(line!.transfers).toEqual([
      {
        transfer_id: sweep.id,
        purpose: 'sweep',
        from: foreign,
        reason: `outgoing transfer ${sweep.id}: the signing key does not derive ${foreign}`,
      },
    ]);

    // Pass after pass (the worker runs one a second): the payouts confirm, the sweep is not tried again.
    setup.sandbox.chain.mine(1);
    mineToFinal(setup);
    let confirmed = 0;
    for (let pass = 0; pass < 5; pass += 1) {
      setup.clock.advance(1_000);
      const result = await executor.runPass();
      metrics.recordPass('tron-sandbox', result);
      expect(result).toMatchObject({ signed: 0, unsignable: 0, failed: 0 });
      confirmed += result.confirmed;
    }
    expect(confirmed).toBe(3);
    for (const [index, payout] of payouts.entries()) {
      expect((await findTransfer(setup.context.db, payout.id))!.status).toBe('confirmed');
      expect(setup.sandbox.chain.state.usdtBalance(recipients[index]!)).toBe(2_000_000n);
    }
    expect(heldLines(sweep.id)).toHaveLength(1);

    // Once the recheck is due it is tried once more, found unsignable again, and held: never failed, never sent.
    setup.clock.advance(UNSIGNABLE_RECHECK_MS);
    const recheck = await executor.runPass();
    metrics.recordPass('tron-sandbox', recheck);
    expect(recheck).toMatchObject({ signed: 0, unsignable: 1, failed: 0 });
    expect(heldLines(sweep.id)).toHaveLength(2);
    expect((await findTransfer(setup.context.db, sweep.id))!).toMatchObject({ status: 'queued', tx_id: null });
    expect(await attemptsOf(setup.context.db, sweep.id)).toHaveLength(0);
    expect(setup.sandbox.chain.state.usdtBalance(foreign)).toBe(30_000_000n);
    expect(log.submitted.map((entry) => entry.id)).not.toContain(sweep.id);
    expect(log.final.map((entry) => entry.id)).not.toContain(sweep.id);
    const counter = await registry.getSingleMetric('paygate_outgoing_transfers_unsignable_total')!.get();
    expect(counter.values).toEqual([{ labels: { chain: 'tron-sandbox' }, value: 2 }]);
  });

  it('a payout the key cannot sign waits, then fails signer_unavailable so its owner voids the reservation; a top-up stays held', async () => {
    fundHotWallet(setup);
    // The hot wallet recorded for the chain is not the key's: none of its transfers can be signed.
    const executor = executorFor(setup, log, { logger, fundsWaitSeconds: 60, hotWallet: freshAddress() });
    const payout = await enqueuePayout(setup, freshAddress(), 5_000_000n);
    const topUp = await enqueuePayout(setup, freshAddress(), 2_000_000n, {
      purpose: 'gas_topup',
      ownerId: 'top_test',
      asset: 'TRX',
    });
    expect(await executor.runPass()).toMatchObject({ signed: 0, unsignable: 2, waitingForFunds: 1, failed: 0 });
    expect((await findTransfer(setup.context.db, payout.id))!.status).toBe('queued');
    // Past the funds wait but before the recheck: untouched.
    setup.clock.advance(61_000);
    expect(await executor.runPass()).toMatchObject({ unsignable: 0, failed: 0 });
    setup.clock.advance(UNSIGNABLE_RECHECK_MS);
    expect(await executor.runPass()).toMatchObject({ signed: 0, unsignable: 2, failed: 1 });
    const failed = (await findTransfer(setup.context.db, payout.id))!;
    expect(failed).toMatchObject({ status: 'failed', error_code: 'signer_unavailable', tx_id: null });
    expect(failed.error_message).toContain('the signing key does not derive the sending address');
    expect(log.final.map((entry) => [entry.id, entry.errorCode])).toEqual([[payout.id, 'signer_unavailable']]);
    expect((await findTransfer(setup.context.db, topUp.id))!).toMatchObject({ status: 'queued', tx_id: null });
    expect(await attemptsOf(setup.context.db, topUp.id)).toHaveLength(0);
  });
});
