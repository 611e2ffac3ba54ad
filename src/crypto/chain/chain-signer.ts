// The signer's key: a book's sealed signing key (keys/sealed-signing-keys.ts) opened for
// the chain whose addresses it derived, in the worker role only. The sign-once executor
// (crypto/sending/) asks a chain's access for it when it first signs.
import { ConfigError } from '../../config.ts';
import type { DepositSigningKey } from '../keys/hd-keys.ts';
import { openSigningKey, type SealedKeyStore } from '../keys/sealed-signing-keys.ts';

/**
 * The book's sealed signing key, opened on the first call and kept (the signing role signs
 * every pass); a failure is not kept, so an import made meanwhile is found by the next call.
 */
export function sealedSigningKey(
  store: SealedKeyStore,
  book: 'sandbox' | 'live',
  xpub: string,
): () => Promise<DepositSigningKey> {
  let opened: Promise<DepositSigningKey> | undefined;
  return () =>
    (opened ??= (async () => {
      const key = await openSigningKey(store, book);
      if (key === undefined) {
        throw new ConfigError(
          `the ${book} signing key`,
          'is not imported: seal the mnemonic or xprv with `paygate crypto keys import` (it reads stdin, or --file PATH), then restart the worker role (docs/security.md)',
        );
      }
      if (key.xpub !== xpub) {
        throw new ConfigError(
          `the ${book} signing key`,
          `stored sealed is not the key of ${book === 'live' ? 'PAYGATE_TRON_XPUB_FILE' : 'the sandbox addresses'} (its account xpub differs)`,
        );
      }
      return key;
    })().catch((error: unknown) => {
      opened = undefined;
      throw error;
    }));
}

/** A live signing key where this process has no sealed key store: refused, naming why. */
export function noLiveSigningKey(): Promise<DepositSigningKey> {
  return Promise.reject(
    new ConfigError('the live signing key', 'is not available: this process has no sealed key store'),
  );
}
