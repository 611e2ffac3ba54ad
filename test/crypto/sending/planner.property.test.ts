// The executor's planner (pure decisions, no database, no node): properties
// over generated balances, prices and transfers, with a fixed seed so a
// failure reproduces.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterSending,
  chainCostMicro,
  expiryVerdict,
  fits,
  lessInFlight,
  nextTimestampMs,
  signingRoom,
  transferNeeds,
  waitingVerdict,
  type Balances,
  type PlannedTransfer,
} from '../../../src/crypto/sending/planner.ts';
import { faucetTopUp } from '../../../src/crypto/chain/sandbox-faucet.ts';
import { sunToMicroUsdt } from '../../../src/crypto/sending/transfer-cost.ts';
import type { ChainPrices } from '../../../src/crypto/tron/node-client.ts';

const SETTINGS = { seed: 20_251_127, numRuns: 500 };
const amount = fc.bigInt({ min: 1n, max: 10n ** 13n });
const held = fc.bigInt({ min: 0n, max: 10n ** 14n });
const bandwidthLeft = fc.bigInt({ min: 0n, max: 2_000n });
const balances = fc.record<Balances>({
  usdt: held,
  trxSun: held,
  energy: fc.bigInt({ min: 0n, max: 10n ** 7n }),
  stakedBandwidth: bandwidthLeft,
  freeBandwidth: bandwidthLeft,
});
const prices = fc.record<ChainPrices>({
  energyPriceSun: fc.bigInt({ min: 1n, max: 1_000n }),
  bandwidthPriceSun: fc.bigInt({ min: 1n, max: 10_000n }),
  createAccountFeeSun: fc.bigInt({ min: 0n, max: 10n ** 7n }),
  createNewAccountFeeSun: fc.bigInt({ min: 0n, max: 10n ** 7n }),
});
const transfer = fc.record<PlannedTransfer>({ asset: fc.constantFrom('USDT' as const, 'TRX' as const), amount });
const energy = fc.bigInt({ min: 0n, max: 10n ** 6n });

describe('funds arithmetic', () => {
  it('a transfer that fits never leaves its sender below zero', () => {
    fc.assert(
      fc.property(transfer, balances, prices, energy, (planned, balance, chainPrices, used) => {
        const needs = transferNeeds(planned, balance, chainPrices, used);
        fc.pre(fits(balance, needs));
        const left = afterSending(balance, needs);
        expect(left.usdt >= 0n && left.trxSun >= 0n && left.energy >= 0n).toBe(true);
        expect(left.stakedBandwidth >= 0n && left.freeBandwidth >= 0n).toBe(true);
      }),
      SETTINGS,
    );
  });

  it('bytes are burned only when neither the staked bandwidth nor the free allowance covers them whole, staked first', () => {
    fc.assert(
      fc.property(transfer, balances, prices, energy, (planned, balance, chainPrices, used) => {
        const needs = transferNeeds(planned, balance, chainPrices, used);
        const expected =
          needs.bandwidth <= balance.stakedBandwidth
            ? 'staked'
            : needs.bandwidth <= balance.freeBandwidth
              ? 'free'
              : 'burned';
        expect(needs.bandwidthSource).toBe(expected);
        const burnedBytes = transferNeeds(
          planned,
          { ...balance, stakedBandwidth: 0n, freeBandwidth: 0n },
          chainPrices,
          used,
        );
        expect(burnedBytes.needTrx - needs.needTrx).toBe(
          expected === 'burned' ? 0n : needs.bandwidth * chainPrices.bandwidthPriceSun,
        );
      }),
      SETTINGS,
    );
  });

  it('more energy never costs less TRX, and staked energy is burned only beyond what the sender has', () => {
    fc.assert(
      fc.property(transfer, balances, prices, energy, energy, (planned, balance, chainPrices, a, b) => {
        const [low, high] = a < b ? [a, b] : [b, a];
        const cheap = transferNeeds(planned, balance, chainPrices, low);
        const dear = transferNeeds(planned, balance, chainPrices, high);
        expect(dear.needTrx >= cheap.needTrx).toBe(true);
        expect(dear.burnedEnergy).toBe(high > balance.energy ? high - balance.energy : 0n);
      }),
      SETTINGS,
    );
  });

  it('a USDT transfer needs its amount in USDT; a TRX transfer needs its amount in TRX and no USDT', () => {
    fc.assert(
      fc.property(transfer, balances, prices, energy, (planned, balance, chainPrices, used) => {
        const needs = transferNeeds(planned, balance, chainPrices, used);
        if (planned.asset === 'USDT') expect(needs.needUsdt).toBe(planned.amount);
        else expect([needs.needUsdt, needs.needTrx >= planned.amount]).toEqual([0n, true]);
      }),
      SETTINGS,
    );
  });

  it('transfers signed one after another from one address never spend more than it held', () => {
    fc.assert(
      fc.property(
        fc.array(transfer, { maxLength: 20 }),
        balances,
        prices,
        energy,
        (queue, start, chainPrices, used) => {
          let balance = start;
          let spentUsdt = 0n;
          for (const planned of queue) {
            const needs = transferNeeds(planned, balance, chainPrices, planned.asset === 'USDT' ? used : 0n);
            if (!fits(balance, needs)) continue;
            balance = afterSending(balance, needs);
            spentUsdt += needs.needUsdt;
          }
          expect(spentUsdt <= start.usdt && balance.trxSun >= 0n).toBe(true);
        },
      ),
      SETTINGS,
    );
  });

  it('what is in flight is taken off what the address holds: USDT, TRX as if burned, and staked energy (never below 0)', () => {
    fc.assert(
      fc.property(
        balances,
        fc.array(transfer, { maxLength: 10 }),
        energy,
        prices,
        (start, inFlight, dear, chainPrices) => {
          const left = lessInFlight(start, inFlight, dear, chainPrices);
          const usdt = inFlight.filter((item) => item.asset === 'USDT');
          expect(left.usdt).toBe(start.usdt - usdt.reduce((sum, item) => sum + item.amount, 0n));
          const energyTaken = dear * BigInt(usdt.length);
          expect(left.trxSun <= start.trxSun).toBe(true);
          expect(left.stakedBandwidth >= 0n && left.stakedBandwidth <= start.stakedBandwidth).toBe(true);
          expect(left.freeBandwidth >= 0n && left.freeBandwidth <= start.freeBandwidth).toBe(true);
          expect(left.energy).toBe(start.energy > energyTaken ? start.energy - energyTaken : 0n);
        },
      ),
      SETTINGS,
    );
  });

  it('the chain cost in micro-USDT is the sum of each fee rounded up, never below the exact value', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 0n, max: 10n ** 10n }), { maxLength: 30 }),
        fc.bigInt({ min: 1n, max: 10n ** 7n }),
        (fees, rate) => {
          const micro = chainCostMicro(fees, rate);
          const exact = fees.reduce((sum, fee) => sum + fee * rate, 0n);
          expect(micro * 1_000_000n >= exact).toBe(true);
          expect(micro).toBe(fees.reduce((sum, fee) => sum + sunToMicroUsdt(fee, rate), 0n));
        },
      ),
      SETTINGS,
    );
  });
});

describe('what to sign next', () => {
  it('the room is never above the batch nor the in-flight bound', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), fc.integer({ min: 1, max: 5_000 }), (max, inFlight, batch) => {
        const room = signingRoom(max, inFlight, batch);
        expect(room <= batch && room <= max - inFlight).toBe(true);
      }),
      SETTINGS,
    );
  });

  it('build times strictly increase and never fall behind the clock', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 1, maxLength: 50 }), (clockReadings) => {
        let last = 0;
        for (const now of clockReadings) {
          const next = nextTimestampMs(last, now);
          expect(next > last && next >= now).toBe(true);
          last = next;
        }
      }),
      SETTINGS,
    );
  });

  it('the sandbox faucet adds exactly enough, with a margin, and nothing when the hot wallet suffices', () => {
    fc.assert(
      fc.property(fc.array(transfer, { maxLength: 10 }), balances, (queue, hot) => {
        const added = faucetTopUp(queue, hot);
        const after = faucetTopUp(queue, { ...hot, usdt: hot.usdt + added.usdt, trxSun: hot.trxSun + added.trxSun });
        expect(after).toEqual({ usdt: 0n, trxSun: 0n });
      }),
      SETTINGS,
    );
  });
});

describe('expiry and waiting decisions', () => {
  const waitingRow = fc.record({
    id: fc.uuid(),
    short_of_funds_since: fc.option(fc.date({ min: new Date(0), max: new Date(2 ** 40), noInvalidDate: true }), {
      nil: null,
    }),
  });

  it('waiting transfers split into those that still wait and those overdue, nothing lost or doubled', () => {
    fc.assert(
      fc.property(
        fc.array(waitingRow, { maxLength: 20 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.nat(10 ** 9),
        (rows, nowMs, waitMs) => {
          const { waiting, overdue } = waitingVerdict(rows, nowMs, waitMs);
          expect(waiting.length + overdue.length).toBe(rows.length);
          for (const row of overdue)
            expect(row.short_of_funds_since !== null && nowMs - row.short_of_funds_since.getTime() >= waitMs).toBe(
              true,
            );
          for (const row of waiting) expect(overdue.includes(row)).toBe(false);
        },
      ),
      SETTINGS,
    );
  });

  it('an expired transfer is signed again only while attempts remain and no rejection rules it out', () => {
    const lastBroadcast = fc.constantFrom(
      null,
      'accepted',
      'unknown',
      'rejected:TAPOS_ERROR',
      'rejected:TRANSACTION_EXPIRATION_ERROR',
      'rejected:CONTRACT_VALIDATE_ERROR',
      'rejected:BANDWITH_ERROR',
      'rejected:SIGERROR',
    );
    fc.assert(
      fc.property(
        lastBroadcast,
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 10 }),
        (broadcast, attempts, maxAttempts) => {
          const verdict = expiryVerdict(broadcast, attempts, maxAttempts);
          const fatal =
            broadcast !== null &&
            broadcast.startsWith('rejected:') &&
            !broadcast.endsWith('TAPOS_ERROR') &&
            !broadcast.endsWith('EXPIRATION_ERROR');
          if (fatal)
            expect(verdict).toMatchObject({
              kind: 'fail',
              message: `the node refused the transaction: ${broadcast.slice('rejected:'.length)}`,
            });
          else if (attempts >= maxAttempts) expect(verdict).toMatchObject({ kind: 'fail', code: 'expired' });
          else expect(verdict).toEqual({ kind: 'retry' });
        },
      ),
      SETTINGS,
    );
  });
});
