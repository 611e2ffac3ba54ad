// The chains crypto receiving works on, one per shop mode. Sandbox shops: deposit
// addresses from the sandbox seed (generated once into the data folder) and the
// simulated chain started in-process on loopback, read through the production
// node client. Live shops: addresses from the configured account xpub
// (PAYGATE_TRON_XPUB_FILE) and the configured nodes (PAYGATE_TRON_NODE_URLS).
// Everything is started on first use: a gateway that never sees crypto starts no chain.
// Where the sandbox chain runs (here or in another role): sandbox-chain.ts.
import { generateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.ts';
import { ServiceUnavailableError } from '../../errors.ts';
import type { ShopMode } from '../../merchants/merchant-service.ts';
import {
  depositAddressKeyFromXpub,
  signingKeyFromMnemonic,
  type DepositAddressKey,
  type DepositSigningKey,
} from '../keys/hd-keys.ts';
import { loadApiRoleKeys } from '../keys/key-material.ts';
import { ensureSealedSandboxSeed, type SealedKeyStore } from '../keys/sealed-signing-keys.ts';
import type { SimulatedChainServer } from '../simchain/chain-server.ts';
import { createSimulatorControl, type SimulatorControl } from '../simchain/control-client.ts';
import { tronAddress, type TronAddress } from '../tron/address.ts';
import { USDT_CONTRACT_MAINNET } from '../tron/trc20-usdt.ts';
import { createTronNodeClient, type TronNodeClient } from '../tron/node-client.ts';
import { nodeRequestMetrics } from '../tron/node-metrics.ts';
import { noLiveSigningKey, sealedSigningKey } from './chain-signer.ts';
import { networkModeOf, type NetworkMode } from '../tron/tron-networks.ts';
import { createSandboxChain } from './sandbox-chain.ts';
import { createQuoteReads, type QuoteReads } from './quote-reads.ts';
import { sandboxHotWalletTopUp, type HotWalletTopUp } from './sandbox-faucet.ts';
import { createUsdtTransferEnergy, type UsdtTransferEnergy } from './transfer-energy.ts';
import { createUsdtDecimalsCheck, type UsdtDecimalsCheck } from './usdt-decimals-check.ts';

/** The chain a deposit arrived on: the simulated chain of sandbox shops, or the configured TRON nodes. */
export type ChainName = 'tron-sandbox' | 'tron-live';
/** Which HD key derived an address: the sandbox seed or the configured live xpub. */
export type AddressKeyId = 'sandbox' | 'live';

/** One chain as the receiving side uses it: which key derives its addresses, and its node. */
export interface ChainAccess {
  readonly chain: ChainName;
  readonly keyId: AddressKeyId;
  /** Derives deposit addresses from an xpub: no private key is held here. */
  readonly addressKey: DepositAddressKey;
  readonly node: TronNodeClient;
  /** The TRC20 USDT contract of this chain: what deposits are counted in and payouts are sent with. */
  readonly usdtContract: TronAddress;
  /** Whether this chain's USDT is real: stored on each crypto object made on it (docs/api-decisions.md). */
  readonly networkMode: NetworkMode;
  /**
   * The signing key of this chain's addresses and hot wallet, for the sign-once
   * executor in the worker role only (src/crypto/sending/). Sandbox: the sealed
   * sandbox seed. Live: the sealed key `paygate crypto keys import` stored (a
   * ConfigError naming the command when none is, or when it is not the key of
   * PAYGATE_TRON_XPUB_FILE). Opened on first call, never in a process that does not sign.
   */
  signingKey(): Promise<DepositSigningKey>;
  /** Sandbox only: tops the hot wallet up from the simulated chain's faucet before the executor signs (sandbox-faucet.ts). */
  readonly topUpHotWallet?: HotWalletTopUp;
  /**
   * Sandbox only: tells the simulated chain whose each transaction is (a shop's id) before it is
   * broadcast, so outcomes a shop armed apply to its own transfers only (docs/crypto.md "Sandboxes kept apart").
   */
  readonly declareTransferOwners?: TransferOwnersDeclaration;
  /** Whether the token contract answered decimals() = 6: the watcher, executor and sweeper of this chain wait for it. */
  readonly usdtDecimals: UsdtDecimalsCheck;
  /** The energy of a USDT transfer on this chain, cached: quotes and the executor share it. */
  readonly transferEnergy: UsdtTransferEnergy;
  /** The chain reads of fee quotes (prices, recipients' USDT, the blacklist), cached for every quoting module. */
  readonly quoteReads: QuoteReads;
}

/** Tells a sandbox chain whose each transaction is. */
export type TransferOwnersDeclaration = (
  owners: readonly { readonly txId: string; readonly owner: string }[],
) => Promise<void>;

/** What the callers of one chain share of its node: made once per access, kept as long as it is. */
function chainState(
  access: Pick<ChainAccess, 'chain' | 'usdtContract' | 'node'>,
): Pick<ChainAccess, 'usdtDecimals' | 'transferEnergy' | 'quoteReads'> {
  return {
    usdtDecimals: createUsdtDecimalsCheck(access),
    transferEnergy: createUsdtTransferEnergy(access.node),
    quoteReads: createQuoteReads(access.node),
  };
}

export interface CryptoChain {
  /** The chain of a shop's mode. A live shop without configured keys or nodes: ServiceUnavailableError naming the setting. */
  forMode(mode: ShopMode): Promise<ChainAccess>;
  /** Whether live crypto has its key file and nodes configured. */
  readonly liveConfigured: boolean;
  /** The simulated chain of sandbox shops, when this process serves it (in-process tests drive it directly). */
  sandboxChain(): Promise<SimulatedChainServer>;
  /** Drives the sandbox chain wherever it runs: this process, the worker's, or PAYGATE_SANDBOX_CHAIN_URL. */
  sandboxControl(): Promise<SimulatorControl>;
  close(): Promise<void>;
}

export interface CryptoChainOptions {
  readonly config: Pick<Config, 'tronXpubFile' | 'tronNodeUrls' | 'tronApiKey' | 'tronUsdtContract'> &
    Partial<Pick<Config, 'tronNodes' | 'tronNetwork'>> & {
      /** PAYGATE_SANDBOX_CHAIN_URL: every role drives this chain; none starts its own. */
      readonly sandboxChainUrl?: string | undefined;
      /** PAYGATE_SANDBOX_CHAIN_RETAIN_BLOCKS: blocks below the solidified one whose bodies the served chain keeps. */
      readonly sandboxChainRetainBlocks?: number | undefined;
    };
  /**
   * Where the sealed signing keys are (sealed-signing-keys.ts): the sandbox seed and the
   * live key. Absent (tests, benchmarks): a fresh in-memory sandbox seed, and no live signing.
   */
  readonly keyStore?: SealedKeyStore;
  /**
   * Whether this process may serve the sandbox chain (default true). The API role
   * (`serve --role api`) does not: it drives the one a worker serves.
   */
  readonly sandboxServes?: boolean;
  /** An API-role process: how long to wait for a worker to serve the sandbox chain before 503 (SANDBOX_DISCOVERY_WAIT_MS). */
  readonly sandboxDiscoveryWaitMs?: number;
  /** The data folder (saved sandbox chain; a clear sandbox seed of an earlier version is sealed from it); undefined: an in-memory chain (tests). */
  readonly dataDir: string | undefined;
  readonly logger: Logger;
  /** Where the node clients count their requests per node (node-metrics.ts); none: not counted. */
  readonly metrics?: Registry | undefined;
  /** `wall` (default): the sandbox chain makes a block every 3 s; `manual`: only when mined (tests). */
  readonly sandboxClock?: 'manual' | 'wall';
  /** Load the saved sandbox chain but never save it back (a CLI beside a running gateway). */
  readonly sandboxReadOnly?: boolean;
}

const LIVE_RETRY_AFTER_SECONDS = 300;

export function createCryptoChain(options: CryptoChainOptions): CryptoChain {
  const { config, logger } = options;
  const onRequest = options.metrics ? nodeRequestMetrics(options.metrics) : undefined;
  let sandbox: Promise<ChainAccess> | undefined;
  let live: Promise<ChainAccess> | undefined;
  const sandboxChain = createSandboxChain({
    chainUrl: config.sandboxChainUrl,
    retainBlocks: config.sandboxChainRetainBlocks,
    serves: options.sandboxServes !== false,
    discoveryWaitMs: options.sandboxDiscoveryWaitMs,
    dataDir: options.dataDir,
    clock: options.sandboxClock ?? 'wall',
    readOnly: options.sandboxReadOnly === true,
    logger,
  });

  const sandboxControl = async () => createSimulatorControl(await sandboxChain.url());

  let sandboxNode: Promise<TronNodeClient> | undefined;
  const resolveSandboxNode = () =>
    (sandboxNode ??= sandboxChain.url().then((url) =>
      createTronNodeClient({
        urls: [url],
        // The sandbox chain (in-process, a worker's, or `paygate chain simulate`) runs mainnet's USDT address.
        usdtContract: USDT_CONTRACT_MAINNET,
        timeoutMs: 5_000,
        onAttemptFailure: (failure, path) => logger.warn({ failure, path }, 'sandbox chain node attempt failed'),
        onRequest,
      }),
    )).catch((error: unknown) => {
      sandboxNode = undefined;
      throw error;
    });

  const startSandbox = () =>
    (sandbox ??= (async () => {
      const { keyStore } = options;
      let signingKey: () => Promise<DepositSigningKey>;
      let xpub: string;
      if (keyStore === undefined) {
        const seedKey = signingKeyFromMnemonic(generateMnemonic(english, 256));
        xpub = seedKey.xpub;
        signingKey = async () => seedKey;
      } else {
        xpub = await ensureSealedSandboxSeed(keyStore, options.dataDir);
        signingKey = sealedSigningKey(keyStore, 'sandbox', xpub);
      }
      // Only the account xpub is kept: the receiving side never needs a private key.
      const addressKey = depositAddressKeyFromXpub(xpub);
      // Found on first use: an API-role process derives addresses before any worker serves the chain.
      const node = lazyNodeClient(resolveSandboxNode, () => sandboxNode);
      return {
        chain: 'tron-sandbox',
        keyId: 'sandbox',
        addressKey,
        usdtContract: USDT_CONTRACT_MAINNET,
        networkMode: networkModeOf('sandbox', config.tronNetwork ?? 'mainnet'),
        node,
        ...chainState({ chain: 'tron-sandbox', usdtContract: USDT_CONTRACT_MAINNET, node }),
        // The sandbox seed signs too (nothing real is at stake); only the worker role asks for it.
        signingKey,
        declareTransferOwners: async (owners) => (await sandboxControl()).declareOwners(owners),
        topUpHotWallet: sandboxHotWalletTopUp({
          faucet: async (address, amounts) => void (await (await sandboxControl()).faucet(address, amounts)),
          hotWallet: addressKey.hotWalletAddress,
          chain: 'tron-sandbox',
          logger,
        }),
      } satisfies ChainAccess;
    })().catch((error: unknown) => {
      sandbox = undefined;
      throw error;
    }));

  const startLive = () => {
    if (config.tronXpubFile === undefined) {
      throw new ServiceUnavailableError(
        'Live crypto is not configured: set PAYGATE_TRON_XPUB_FILE to the file holding the account xpub (docs/crypto.md).',
        LIVE_RETRY_AFTER_SECONDS,
      );
    }
    if (config.tronNodeUrls.length === 0) {
      throw new ServiceUnavailableError(
        'Live crypto is not configured: set PAYGATE_TRON_NODE_URLS to the TRON full nodes to use (docs/crypto.md).',
        LIVE_RETRY_AFTER_SECONDS,
      );
    }
    const xpubFile = config.tronXpubFile;
    return (live ??= (async () => {
      const keys = await loadApiRoleKeys(xpubFile, 'PAYGATE_TRON_XPUB_FILE');
      const signingKey =
        options.keyStore === undefined
          ? noLiveSigningKey
          : sealedSigningKey(options.keyStore, 'live', keys.depositAddressKey.xpub);
      const usdtContract = tronAddress(config.tronUsdtContract);
      const node = createTronNodeClient({
        // Each URL with its own key and budget (PAYGATE_TRON_NODES).
        urls: config.tronNodes?.length ? config.tronNodes : config.tronNodeUrls,
        apiKey: config.tronNodes?.length ? undefined : config.tronApiKey,
        usdtContract,
        onAttemptFailure: (failure, path) => logger.warn({ failure, path }, 'TRON node attempt failed'),
        onRequest,
      });
      return {
        signingKey,
        chain: 'tron-live',
        keyId: 'live',
        addressKey: keys.depositAddressKey,
        usdtContract,
        networkMode: networkModeOf('live', config.tronNetwork ?? 'mainnet'),
        node,
        ...chainState({ chain: 'tron-live', usdtContract, node }),
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
    async sandboxChain() {
      if (!(await sandboxChain.servesHere()))
        throw new Error('The sandbox chain runs in another process: drive it through sandboxControl().');
      return sandboxChain.server();
    },
    sandboxControl,
    close() {
      // Once: the runtime and a test's teardown may both close it.
      closing ??= (async () => {
        const accesses = await Promise.allSettled([sandbox, live].filter((entry) => entry !== undefined));
        for (const access of accesses) if (access.status === 'fulfilled') await access.value.node.close();
        await sandboxChain.close();
      })();
      return closing;
    },
  };
}

/**
 * A node client whose URL is found on its first call (and found again after a
 * failed look-up). Every TronNodeClient method but close is async, so each one
 * simply waits for the client and calls it.
 */
function lazyNodeClient(
  resolve: () => Promise<TronNodeClient>,
  resolved: () => Promise<TronNodeClient> | undefined,
): TronNodeClient {
  return new Proxy({} as TronNodeClient, {
    get(_target, name) {
      if (name === 'close') {
        return async () => {
          const client = await resolved()?.catch(() => undefined);
          await client?.close();
        };
      }
      if (name === 'then') return undefined; // not a thenable: `await access.node` stays the proxy
      return async (...args: unknown[]) => {
        const client = await resolve();
        const method = client[name as keyof TronNodeClient] as (...methodArgs: unknown[]) => Promise<unknown>;
        return method.apply(client, args);
      };
    },
  });
}
