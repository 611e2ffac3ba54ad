// The chain module: the one chain handle of a gateway process (deposit address keys,
// node clients, the sandbox chain and the signing keys), made here once and handed to
// every crypto module that reads or sends on a chain. It closes the handle in `close`.
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import { selectsWorker, type Config } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../db/transaction.ts';
import type { GatewayModule } from '../../gateway-module.ts';
import type { DependencyHealth } from '../../health/dependency-health.ts';
import { createCryptoChain, type ChainAccess, type CryptoChain } from './crypto-chain.ts';

/** What the crypto services are built from: the platform parts and the chain handle. */
export interface CryptoDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Config;
  /** Deposit address keys, node clients and the sandbox chain. */
  readonly chain: CryptoChain;
  readonly logger: Logger;
  /** Outages of the database and the nodes, logged once each (health/dependency-health.ts). */
  readonly health: DependencyHealth;
}

/** Refuses a chain whose deposit key is not the one the database's addresses were derived from. */
type ChainKeyCheck = (access: ChainAccess) => Promise<void>;

/** The chain watcher's worker name: the process that runs it serves the sandbox chain. */
export const CHAIN_WATCHER_WORKER = 'crypto-chain-watcher';

export type ChainModuleDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'role' | 'keyring'> &
  Partial<Pick<AppContext, 'metrics'>> & {
    /** Run on every chain access before it is handed out (receiving's key-of-database check). */
    readonly checkKey?: ChainKeyCheck;
    /** A chain made by the caller (tests, a CLI's read-only sandbox) instead of the configured one; the module still closes it. */
    readonly chain?: CryptoChain;
  };

export function createChainModule(deps: ChainModuleDeps): {
  module: GatewayModule & { close(): Promise<void> };
  service: CryptoChain;
} {
  const made = deps.chain ?? configuredChain(deps);
  const chain = deps.checkKey === undefined ? made : checkingKeys(made, deps.checkKey);
  return { module: { name: 'crypto-chain', close: () => made.close() }, service: chain };
}

/** The chain the configuration names: sandbox and live, started on first use. */
function configuredChain(deps: ChainModuleDeps): CryptoChain {
  return createCryptoChain({
    config: deps.config,
    // PAYGATE_DATA_DIR=memory:// (tests): no data folder, so an in-memory sandbox seed and chain.
    dataDir: basename(deps.config.dataDir) === 'memory:' ? undefined : deps.config.dataDir,
    logger: deps.logger,
    metrics: deps.metrics,
    // The signing keys are stored sealed in the database (sealed-signing-keys.ts).
    keyStore: { db: deps.db, keyring: deps.keyring, clock: deps.clock, logger: deps.logger },
    // The process that watches the chain serves the sandbox chain; the API role and worker processes
    // without the watcher (PAYGATE_WORKERS) drive that one (one chain for every process).
    sandboxServes: deps.role !== 'api' && selectsWorker(deps.config.workers, CHAIN_WATCHER_WORKER),
  });
}

/** The chain handle whose accesses pass `check` before they are handed out. */
function checkingKeys(chain: CryptoChain, check: ChainKeyCheck): CryptoChain {
  return {
    async forMode(mode) {
      const access = await chain.forMode(mode);
      await check(access);
      return access;
    },
    liveConfigured: chain.liveConfigured,
    sandboxChain: () => chain.sandboxChain(),
    sandboxControl: () => chain.sandboxControl(),
    close: () => chain.close(),
  };
}
