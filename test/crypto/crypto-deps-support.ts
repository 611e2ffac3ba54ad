// The crypto dependencies of a test context without an app: the modules built as the
// gateway builds them (keys checked against the database), over `chain` or the
// configured one. Close them when done (the chain's node clients and sandbox chain).
import type { AppContext } from '../../src/context.ts';
import type { CryptoChain } from '../../src/crypto/chain/crypto-chain.ts';
import { closeModules, createModules } from '../../src/modules.ts';

export type TestCryptoDeps = AppContext & { readonly chain: CryptoChain; close(): Promise<void> };

export function testCryptoDeps(context: AppContext, chain?: CryptoChain): TestCryptoDeps {
  const modules = createModules(context, { chain });
  return { ...context, chain: modules.chain, close: () => closeModules(modules.list) };
}
