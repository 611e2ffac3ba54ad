// The chain a CLI command reads beside a running gateway, which owns the
// sandbox chain: the one a worker serves when there is one, else the saved one
// loaded from its file and never saved back.
import { createChainModule } from '../crypto/chain/chain-module.ts';
import { createCryptoChain, type CryptoChain } from '../crypto/chain/crypto-chain.ts';
import type { SealedKeyStore } from '../crypto/keys/sealed-signing-keys.ts';
import { createKeyOfDatabaseCheck } from '../crypto/receiving/address-allocation.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { Logger } from 'pino';

/** `keyStore`: where the sealed signing keys are, for a command that derives the sandbox's addresses. */
export function readOnlyCryptoChain(config: Config, logger: Logger, keyStore?: SealedKeyStore): CryptoChain {
  return createCryptoChain({
    config,
    dataDir: config.dataDir,
    logger,
    ...(keyStore === undefined ? {} : { keyStore }),
    sandboxClock: 'manual',
    sandboxReadOnly: true,
  });
}

/** The same chain as a chain module that checks deposit keys against the database; close it with `module.close()`. */
export function readOnlyChainModule(
  config: Config,
  context: AppContext,
  keyStore?: SealedKeyStore,
): ReturnType<typeof createChainModule> {
  const chain = readOnlyCryptoChain(config, context.logger, keyStore);
  return createChainModule({ ...context, chain, checkKey: createKeyOfDatabaseCheck(context.db) });
}
