// The background work of crypto receiving (`serve --role worker|all`): a chain
// watcher per chain that has deposit addresses to watch (the sandbox chain and,
// when configured, the live one; a gateway that never made an address starts
// no chain), one leader per chain across every worker process, and the expiry
// of unpaid invoices.
import type { AppContext, Worker } from '../../context.ts';
import { CHAIN_WATCHER_WORKER } from '../chain/chain-module.ts';
import type { ChainAccess, CryptoChain } from '../chain/crypto-chain.ts';
import { reportFailure } from '../../health/dependency-health.ts';
import { createPollingWorker, type PollingWorker } from '../../polling-worker.ts';
import { fillAddressPool } from './address-pool.ts';
import { createChainWatcher, type ChainWatcher } from './chain-watcher.ts';
import { expireDueInvoices } from './invoice-expiry.ts';
import { nextInvoiceExpiry } from './receiving-repository.ts';
import { hasAddressesOfKey } from './receiving-repository.ts';

/** TRON makes a block every 3 s: a pass per block. */
const WATCHER_INTERVAL_MS = 3_000;
const MODES = ['sandbox', 'live'] as const;
const INVOICE_EXPIRY_INTERVAL_MS = 1_000;
/** How often the address pool is looked at; it is topped up once half used (address-pool.ts). */
const ADDRESS_POOL_INTERVAL_MS = 5_000;

/**
 * Sums `work` over the chains of the shop modes that have deposit addresses to watch (the live
 * chain only when configured), until `stopping` says so.
 */
async function sumOverWatchedModes(
  context: Pick<AppContext, 'db'> & { readonly chain: CryptoChain },
  work: (access: ChainAccess) => Promise<number>,
  stopping: () => boolean = () => false,
): Promise<number> {
  let total = 0;
  for (const mode of MODES) {
    if (stopping()) break;
    if (mode === 'live' && !context.chain.liveConfigured) continue;
    // Addresses of a mode are derived by the key of the same name.
    if (!(await hasAddressesOfKey(context.db, mode))) continue;
    total += await work(await context.chain.forMode(mode));
  }
  return total;
}

export function createChainWatcherWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'logger' | 'health'> & { readonly chain: CryptoChain },
): Worker & { runOnce(): Promise<number> } {
  const watchers = new Map<string, ChainWatcher>();
  const polling = createPollingWorker({
    name: CHAIN_WATCHER_WORKER,
    intervalMs: WATCHER_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    runOnce: () =>
      sumOverWatchedModes(context, async (access) => {
        // Nothing is read as micro-USDT before the contract has said it has 6 decimals.
        if (!(await access.usdtDecimals.confirmed(context.clock, context.logger))) return 0;
        let watcher = watchers.get(access.chain);
        if (!watcher) {
          watcher = createChainWatcher({ db: context.db, clock: context.clock, logger: context.logger, access });
          watchers.set(access.chain, watcher);
        }
        const askedAt = Date.now();
        try {
          const result = await watcher.runPass();
          context.health.up('chain_nodes', askedAt);
          return result.blocksScanned + result.depositsSettled;
        } catch (error) {
          // One chain's trouble (its nodes down) must not stop the other's watcher.
          reportFailure(context, error, { chain: access.chain }, 'chain watcher pass failed');
          return 0;
        }
      }),
  });
  return {
    name: polling.name,
    runOnce: () => polling.runOnce(),
    start: () => polling.start(),
    async stop() {
      await polling.stop();
      for (const watcher of watchers.values()) await watcher.release().catch(() => undefined);
      // The chain handle is the chain module's: it closes it once the routes and workers have stopped.
    },
  };
}

/**
 * With database notifications it sleeps until the next open invoice's expires_at or the
 * 30 s backstop: an invoice lives at least 300 s, so the backstop pass after its creation
 * always comes before its expiry, and no notification is needed for new invoices.
 */
export function createInvoiceExpiryWorker(
  context: Pick<AppContext, 'db' | 'clock' | 'logger' | 'health' | 'notifications'>,
): Worker {
  return createPollingWorker({
    name: 'crypto-invoice-expiry',
    intervalMs: INVOICE_EXPIRY_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    runOnce: () => expireDueInvoices(context.db, context.clock),
    wakeUps: context.notifications && {
      notifications: context.notifications,
      topic: 'crypto-invoice-expiry',
      clock: context.clock,
      nextDueAt: (passStartedAt) => nextInvoiceExpiry(context.db, passStartedAt),
    },
  });
}

/**
 * Keeps each key's pool of ready deposit addresses topped up (address-pool.ts),
 * for the keys that derive addresses at all: a gateway whose shops never made
 * an address derives none ahead either.
 */
export function createAddressPoolWorker(
  context: Pick<AppContext, 'db' | 'config' | 'logger' | 'health'> & { readonly chain: CryptoChain },
): PollingWorker {
  let stopping = false;
  const polling = createPollingWorker({
    name: 'crypto-address-pool',
    intervalMs: ADDRESS_POOL_INTERVAL_MS,
    logger: context.logger,
    health: context.health,
    async runOnce() {
      if (context.config.addressPoolSize === 0) return 0;
      const fill = (access: ChainAccess) =>
        fillAddressPool(context.db, access, {
          size: context.config.addressPoolSize,
          logger: context.logger,
          stopping: () => stopping,
        });
      return sumOverWatchedModes(context, fill, () => stopping);
    },
  });
  return {
    name: polling.name,
    runOnce: polling.runOnce,
    start() {
      stopping = false;
      polling.start();
    },
    async stop() {
      stopping = true;
      await polling.stop();
    },
  };
}
