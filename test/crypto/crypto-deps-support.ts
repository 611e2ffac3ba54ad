// The crypto dependencies of a test context without an app: the modules built as the
// gateway builds them (keys checked against the database), over `chain` or the
// configured one, and custody's signing pause read from the database as the sending
// worker reads it, and an address pool as the receiving module's. Close them when done (the chain's node clients and sandbox chain).
import type { AppContext } from '../../src/context.ts';
import type { CryptoChain } from '../../src/crypto/chain/crypto-chain.ts';
import { isSigningPaused } from '../../src/crypto/custody/signing-pause.ts';
import { createAddressPool, type AddressPool } from '../../src/crypto/receiving/address-pool.ts';
import type { LedgerBook } from '../../src/ledger/ledger-service.ts';
import { closeModules, createModules } from '../../src/modules.ts';

export type TestCryptoDeps = AppContext & {
  readonly chain: CryptoChain;
  signingPaused(book: LedgerBook): Promise<boolean>;
  readonly addressPool: AddressPool;
  close(): Promise<void>;
};

export function testCryptoDeps(context: AppContext, chain?: CryptoChain): TestCryptoDeps {
  const modules = createModules(context, { chain });
  return {
    ...context,
    chain: modules.chain,
    signingPaused: (book) => isSigningPaused(context.db, book),
    addressPool: createAddressPool(),
    close: () => closeModules(modules.list),
  };
}
