// The energy of a USDT transfer as the gateway takes it from the chain
// (transfer-energy.ts), against the simulated chain over HTTP through the
// production node client: one constant call per (recipient class, energy
// factor), the factor re-read only after its cache time on the given clock,
// and — while the sender holds no USDT, so the contract reverts any dry run —
// the last figure of the class scaled to the factor (java-tron VM.play), or
// the mainnet measurements before any.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import {
  ENERGY_FACTOR_CACHE_MS,
  feeLimitFor,
  FEE_LIMIT_FLOOR_SUN,
  freshRecipient,
  MEASURED_ENERGY_HOLDER,
  MEASURED_ENERGY_NEW_HOLDER,
  createUsdtTransferEnergy,
} from '../../../src/crypto/chain/transfer-energy.ts';
import { createTronNodeClient, type TronNodeClient } from '../../../src/crypto/tron/node-client.ts';

let server: SimulatedChainServer | undefined;
let client: TronNodeClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  server = undefined;
  client = undefined;
});

/** The production client at the network edge, counting its constant calls of transfer and its factor reads. */
async function start() {
  server = await startSimulatedChainServer({ seed: 'transfer energy', host: '127.0.0.1', port: 0 });
  const real = createTronNodeClient({ urls: [server.url], usdtContract: server.chain.parameters.usdtContract });
  client = real;
  const counts = { dryRuns: 0, factorReads: 0 };
  const node = Object.create(real) as TronNodeClient;
  node.dryRunUsdtTransfer = (from, to, amount) => {
    counts.dryRuns += 1;
    return real.dryRunUsdtTransfer(from, to, amount);
  };
  node.getUsdtEnergyFactor = () => {
    counts.factorReads += 1;
    return real.getUsdtEnergyFactor();
  };
  return { chain: server.chain, node, counts };
}

describe('transfer energy from the chain', () => {
  it('asks once per recipient class and factor; the factor again only after its cache time', async () => {
    const { chain, node, counts } = await start();
    const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    const energy = createUsdtTransferEnergy(node);
    const sender = chain.payers[0]!.address;
    const holder = chain.payers[1]!.address;
    for (let round = 0; round < 3; round++) {
      expect(await energy.energyOf(clock, { from: sender, to: freshRecipient(), recipientHoldsUsdt: false })).toBe(
        130_285n,
      );
      expect(await energy.energyOf(clock, { from: sender, to: holder, recipientHoldsUsdt: true })).toBe(64_285n);
    }
    expect(counts).toEqual({ dryRuns: 2, factorReads: 1 });

    chain.setUsdtEnergyFactor(2_500);
    // Within the cache time the old factor stands.
    clock.advance(ENERGY_FACTOR_CACHE_MS - 1);
    expect(await energy.energyOf(clock, { from: sender, to: freshRecipient(), recipientHoldsUsdt: false })).toBe(
      130_285n,
    );
    clock.advance(1);
    expect(await energy.energyFactor(clock)).toBe(2_500);
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, () =>
        energy.energyOf(clock, { from: sender, to: freshRecipient(), recipientHoldsUsdt: false }),
      ),
    );
    expect(new Set(concurrent)).toEqual(new Set([130_285n + 32_571n]));
    expect(counts).toEqual({ dryRuns: 3, factorReads: 2 });
  });

  it('a sender without USDT: the mainnet measurements before any figure, then the last figure scaled to the factor', async () => {
    const { chain, node, counts } = await start();
    const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    const energy = createUsdtTransferEnergy(node);
    const empty = freshRecipient();
    expect(await energy.energyOf(clock, { from: empty, to: freshRecipient(), recipientHoldsUsdt: false })).toBe(
      MEASURED_ENERGY_NEW_HOLDER,
    );
    expect(await energy.energyOf(clock, { from: empty, to: empty, recipientHoldsUsdt: true })).toBe(
      MEASURED_ENERGY_HOLDER,
    );
    // A sender with USDT teaches the figure at factor 0.
    expect(
      await energy.energyOf(clock, { from: chain.payers[0]!.address, to: freshRecipient(), recipientHoldsUsdt: false }),
    ).toBe(130_285n);
    chain.setUsdtEnergyFactor(3_400);
    clock.advance(ENERGY_FACTOR_CACHE_MS);
    // ceil(130,285 × 13,400 / 10,000) = 174,582: at or above what the chain will charge (174,581).
    expect(await energy.energyOf(clock, { from: empty, to: freshRecipient(), recipientHoldsUsdt: false })).toBe(
      174_582n,
    );
    expect(counts.dryRuns).toBe(4);
  });

  it('fee_limit is the estimate plus 20 %, rounded up, never below 15 TRX', () => {
    expect(feeLimitFor(64_285n, 100n)).toBe(FEE_LIMIT_FLOOR_SUN);
    expect(feeLimitFor(130_285n, 100n)).toBe(15_634_200n);
    expect(feeLimitFor(195_427n, 100n)).toBe(23_451_240n);
    expect(feeLimitFor(130_285n, 210n)).toBe(32_831_820n);
  });
});
