// What the crypto receiving services are built from. The chain handle is made
// once per gateway context (on first use) and shared by its routes and workers.
import { basename } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../db/transaction.ts';
import type { SealedKeyStore } from '../keys/sealed-signing-keys.ts';
import { assertKeyOfDatabase } from './address-allocation.ts';
import { createCryptoChain, type CryptoChain } from './crypto-chain.ts';

export interface CryptoDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Config;
  /** Deposit address keys, node clients and the sandbox chain. */
  readonly chain: CryptoChain;
  readonly logger: Logger;
}

const depsOfContext = new WeakMap<AppContext, CryptoDeps>();

/** The crypto dependencies of a gateway context, made on first use; `chain` replaces the default (tests). */
export function cryptoDepsFor(context: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'role' | 'keyring'> & Partial<Pick<AppContext, 'metrics'>>, chain?: CryptoChain): CryptoDeps {
  const key = context as AppContext;
  const existing = depsOfContext.get(key);
  if (existing && chain === undefined) return existing;
  const deps: CryptoDeps = {
    db: context.db,
    clock: context.clock,
    config: context.config,
    logger: context.logger,
    chain: checkingKeys(
      context.db,
      chain ??
      createCryptoChain({
        config: context.config,
        // PAYGATE_DATA_DIR=memory:// (tests): no data folder, so an in-memory sandbox seed and chain.
        dataDir: basename(context.config.dataDir) === 'memory:' ? undefined : context.config.dataDir,
        logger: context.logger,
        metrics: context.metrics,
        // The signing keys are stored sealed in the database (sealed-signing-keys.ts).
        keyStore: sealedKeyStoreOf(context),
        // The API role drives the sandbox chain a worker serves (one chain for every role).
        sandboxServes: context.role !== 'api',
      }),
    ),
  };
  depsOfContext.set(key, deps);
  return deps;
}

/** The sealed signing keys of a context's database (sealed-signing-keys.ts). */
export function sealedKeyStoreOf(context: Pick<AppContext, 'db' | 'keyring' | 'clock' | 'logger'>): SealedKeyStore {
  return { db: context.db, keyring: context.keyring, clock: context.clock, logger: context.logger };
}

/** The chain handle whose keys are checked against the database's addresses on first use (assertKeyOfDatabase). */
function checkingKeys(db: Db, chain: CryptoChain): CryptoChain {
  return Object.assign(Object.create(chain) as CryptoChain, {
    async forMode(mode: Parameters<CryptoChain['forMode']>[0]) {
      const access = await chain.forMode(mode);
      await assertKeyOfDatabase(db, access);
      return access;
    },
  });
}

/** Stops the context's chain handle (its node clients and the in-process sandbox chain), if one was made. */
export async function closeCryptoDeps(context: Pick<AppContext, 'db'>): Promise<void> {
  const deps = depsOfContext.get(context as AppContext);
  depsOfContext.delete(context as AppContext);
  await deps?.chain.close();
}
