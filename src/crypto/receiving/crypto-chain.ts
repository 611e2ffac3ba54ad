// The chains crypto receiving works on, one per shop mode. Sandbox shops: deposit
// addresses from the sandbox seed (generated once into the data folder) and the
// simulated chain started in-process on loopback, read through the production
// node client. Live shops: addresses from the configured account xpub
// (PAYGATE_TRON_XPUB_FILE) and the configured nodes (PAYGATE_TRON_NODE_URLS).
// Everything is started on first use: a gateway that never sees crypto starts no chain.
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { ServiceUnavailableError } from '../../errors.ts';
import type { ShopMode } from '../../merchants/merchant-service.ts';
import { depositAddressKeyFromXpub, signingKeyFromMnemonic, type DepositAddressKey } from '../keys/hd-keys.ts';
import { ensureSandboxSeed, loadApiRoleKeys } from '../keys/key-material.ts';
import { startSimulatedChainServer, type SimulatedChainServer } from '../simchain/chain-server.ts';
import { tronAddress } from '../tron/address.ts';
import { createTronNodeClient, type TronNodeClient } from '../tron/node-client.ts';
import type { AddressKeyId, ChainName } from './receiving-tables.ts';

/** One chain as the receiving side uses it: which key derives its addresses, and its node. */
export interface ChainAccess {
  readonly chain: ChainName;
  readonly keyId: AddressKeyId;
  /** Derives deposit addresses from an xpub: no private key is held here. */
  readonly addressKey: DepositAddressKey;
  readonly node: TronNodeClient;
}

export interface CryptoChain {
  /** The chain of a shop's mode. A live shop without configured keys or nodes: ServiceUnavailableError naming the setting. */
  forMode(mode: ShopMode): Promise<ChainAccess>;
  /** Whether live crypto has its key file and nodes configured. */
  readonly liveConfigured: boolean;
  /** The simulated chain of sandbox shops (test helpers drive it). */
  sandboxChain(): Promise<SimulatedChainServer>;
  close(): Promise<void>;
}

export interface CryptoChainOptions {
  readonly config: Pick<Config, 'tronXpubFile' | 'tronNodeUrls' | 'tronApiKey' | 'tronUsdtContract'>;
  /** The data folder (sandbox seed, saved sandbox chain); undefined: an in-memory seed and chain (tests). */
  readonly dataDir: string | undefined;
  readonly logger: Logger;
  /** `wall` (default): the sandbox chain makes a block every 3 s; `manual`: only when mined (tests). */
  readonly sandboxClock?: 'manual' | 'wall';
  /** Load the saved sandbox chain but never save it back (a CLI beside a running gateway). */
  readonly sandboxReadOnly?: boolean;
}

/** The simulated chain's seed: its payers and block hashes; not a secret (nothing real is at stake). */
const SANDBOX_CHAIN_SEED = 'paygate sandbox chain';
const SANDBOX_CHAIN_FILE = 'sandbox-chain.json';
const LIVE_RETRY_AFTER_SECONDS = 300;

export function createCryptoChain(options: CryptoChainOptions): CryptoChain {
  const { config, logger } = options;
  let sandboxServer: Promise<SimulatedChainServer> | undefined;
  let sandbox: Promise<ChainAccess> | undefined;
  let live: Promise<ChainAccess> | undefined;

  const startSandboxServer = () =>
    (sandboxServer ??= startSimulatedChainServer({
      seed: SANDBOX_CHAIN_SEED,
      clock: options.sandboxClock ?? 'wall',
      unref: true,
      ...(options.dataDir === undefined ? {} : { persistFile: join(options.dataDir, SANDBOX_CHAIN_FILE) }),
    }));

  const startSandbox = () =>
    (sandbox ??= (async () => {
      const server = await startSandboxServer();
      const seedKey =
        options.dataDir === undefined ? signingKeyFromMnemonic(generateMnemonic(english, 256)) : (await ensureSandboxSeed(options.dataDir)).depositAddressKey;
      return {
        chain: 'tron-sandbox',
        keyId: 'sandbox',
        // Only the account xpub is kept: the receiving side never needs a private key.
        addressKey: depositAddressKeyFromXpub(seedKey.xpub),
        node: createTronNodeClient({
          urls: [server.url],
          usdtContract: server.chain.parameters.usdtContract,
          timeoutMs: 5_000,
          onAttemptFailure: (failure, path) => logger.warn({ failure, path }, 'sandbox chain node attempt failed'),
        }),
      } satisfies ChainAccess;
    })());

  const startLive = () => {
    if (config.tronXpubFile === undefined) {
      throw new ServiceUnavailableError('Live crypto is not configured: set PAYGATE_TRON_XPUB_FILE to the file holding the account xpub (docs/crypto.md).', LIVE_RETRY_AFTER_SECONDS);
    }
    if (config.tronNodeUrls.length === 0) {
      throw new ServiceUnavailableError('Live crypto is not configured: set PAYGATE_TRON_NODE_URLS to the TRON full nodes to use (docs/crypto.md).', LIVE_RETRY_AFTER_SECONDS);
    }
    const xpubFile = config.tronXpubFile;
    return (live ??= (async () => {
      const keys = await loadApiRoleKeys(xpubFile, 'PAYGATE_TRON_XPUB_FILE');
      return {
        chain: 'tron-live',
        keyId: 'live',
        addressKey: keys.depositAddressKey,
        node: createTronNodeClient({
          urls: config.tronNodeUrls,
          apiKey: config.tronApiKey,
          usdtContract: tronAddress(config.tronUsdtContract),
          onAttemptFailure: (failure, path) => logger.warn({ failure, path }, 'TRON node attempt failed'),
        }),
      } satisfies ChainAccess;
    })().catch((error: unknown) => {
      live = undefined; // a fixed file is picked up by the next call
      throw error;
    }));
  };

  let closing: Promise<void> | undefined;
  return {
    forMode: async (mode) => (mode === 'sandbox' ? startSandbox() : startLive()),
    liveConfigured: config.tronXpubFile !== undefined && config.tronNodeUrls.length > 0,
    sandboxChain: startSandboxServer,
    close() {
      // Once: the runtime and a test's teardown may both close it.
      closing ??= (async () => {
        const accesses = await Promise.allSettled([sandbox, live].filter((entry) => entry !== undefined));
        for (const access of accesses) if (access.status === 'fulfilled') await access.value.node.close();
        // A read-only sandbox chain is left unclosed (closing saves it); it does not hold the process open.
        if (sandboxServer && !options.sandboxReadOnly) await (await sandboxServer).close();
      })();
      return closing;
    },
  };
}
