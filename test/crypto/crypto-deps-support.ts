// The crypto dependencies of a test context without an app: the crypto modules built
// as the gateway builds them (keys checked against the database), over `chain` or the
// configured one. Close them when done (the chain's node clients and sandbox chain).
import type { AppContext } from '../../src/context.ts';
import type { CryptoChain } from '../../src/crypto/chain/crypto-chain.ts';
import { createCryptoModules, type CryptoModules } from '../../src/modules.ts';

export type TestCryptoDeps = AppContext & { readonly chain: CryptoChain; readonly modules: CryptoModules; close(): Promise<void> };

export function testCryptoDeps(context: AppContext, chain?: CryptoChain): TestCryptoDeps {
  const modules = createCryptoModules(context, { chain });
  return { ...context, chain: modules.chain, modules, close: () => modules.close() };
}
