// A live chain for the quote tests that need a rental provider (only the live
// chain has one: energy/chain-rental.ts): the simulated chain served over HTTP
// as the live full node, the account's xpub in a key file, and the itrx
// simulator as the provider, renting below the burn price. The config the app
// is started with names them, as an operator's would.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import type { Config } from '../../../src/config.ts';
import type { DatabaseBackend } from '../../../src/db/database.ts';
import { startItrxSimulator, type ItrxSimulator } from '../../../src/crypto/energy/itrx/itrx-simulator.ts';
import { TRON_ACCOUNT_PATH } from '../../../src/crypto/keys/hd-keys.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { createPayoutTestApp, type PayoutShop, type PayoutTestApp } from './payout-support.ts';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** Sun per energy of a rental: below the simulated chain's burn price of 100. */
export const RENT_PRICE_SUN = 40n;

interface LiveRental {
  readonly node: SimulatedChainServer;
  readonly provider: ItrxSimulator;
  /** The config of a gateway whose live chain is `node` and whose energy sources include `rent`. */
  readonly config: Partial<Config>;
  close(): Promise<void>;
}

async function openLiveRental(): Promise<LiveRental> {
  const folder = await mkdtemp(join(tmpdir(), 'paygate-live-rental-'));
  const xpubFile = join(folder, 'xpub');
  const xpub = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive(TRON_ACCOUNT_PATH).publicExtendedKey;
  await writeFile(xpubFile, xpub, { mode: 0o600 });
  const node = await startSimulatedChainServer({ seed: 'live-rental' });
  const credentials = { apiKey: 'B433BFF1CDE7450AA38A56BEAC690DD4', apiSecret: '0285A2741D0E76E2E187260EB23E5185' };
  const provider = await startItrxSimulator({
    ...credentials,
    priceSunPerEnergy: Number(RENT_PRICE_SUN),
    balanceSun: 1_000_000_000n,
    delegate: async () => 'ab'.repeat(32),
  });
  return {
    node,
    provider,
    config: {
      tronXpubFile: xpubFile,
      tronNodeUrls: [node.url],
      tronEnergySources: new Set(['stake', 'rent', 'burn'] as const),
      tronEnergyRental: { url: provider.url, ...credentials },
    },
    async close() {
      await provider.close();
      await node.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

export interface LiveRentalApp {
  readonly live: LiveRental;
  readonly testApp: PayoutTestApp;
  /** A live shop of the app. */
  readonly shop: PayoutShop;
  /** Checks the ledger, then closes the app and the live chain. */
  close(): Promise<void>;
}

/** A payout test app on a fresh live rental (`config` beside its own), a live shop, and the hot wallet funded on that chain. */
export async function openLiveRentalApp(
  backend: DatabaseBackend,
  config: Partial<Config> = {},
): Promise<LiveRentalApp> {
  const live = await openLiveRental();
  let testApp: PayoutTestApp | undefined;
  try {
    testApp = await createPayoutTestApp(backend, { config: { ...config, ...live.config } });
    const shop = await testApp.payoutShop('live');
    const access = await testApp.crypto.chain.forMode('live');
    live.node.chain.faucet(access.addressKey.hotWalletAddress, { trxSun: 100_000_000_000n, usdt: 100_000_000_000n });
    live.node.chain.mine(1);
    const opened = testApp;
    return {
      live,
      testApp: opened,
      shop,
      async close() {
        try {
          await opened.expectLedgerGreen();
        } finally {
          await opened.close();
          await live.close();
        }
      },
    };
  } catch (error) {
    await testApp?.close();
    await live.close();
    throw error;
  }
}
