// Deposit addresses from one HD key (BIP32/BIP44, TRON coin type 195): address
// i is m/44'/195'/0'/0/i; the hot wallet (where payouts are sent from and deposits
// are swept to) is m/44'/195'/0'/1/0, the first address of the internal chain. The hardened part stops at the account key
// m/44'/195'/0', so its extended PUBLIC key (xpub) derives every address while
// holding no private key: that is all the API role gets. Only the signing role
// holds the private side, and only `signingKeyFrom…` can produce it.
// docs/tron.md §1.1 checked this path against TronWeb.fromMnemonic.
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { tronAddressFromPublicKey, type TronAddress } from '../tron/address.ts';

/** The account key's path: BIP44 purpose, TRON's coin type 195, account 0 (all hardened). */
export const TRON_ACCOUNT_PATH = "m/44'/195'/0'";
/** Deposit addresses are the external chain (0) under the account. */
const DEPOSIT_CHAIN = 0;
/** Non-hardened child indexes are 0 … 2^31 − 1. */
export const DEPOSIT_INDEX_LIMIT = 2 ** 31;
/** The hot wallet is the internal chain (1), index 0: the same xpub derives it, so the API role knows it too. */
const HOT_WALLET_CHAIN = 1;
const HOT_WALLET_INDEX = 0;
const ACCOUNT_DEPTH = 3;

/** What the API role holds: derives deposit addresses, cannot sign. */
export type DepositAddressKey = {
  /** The account-level xpub (m/44'/195'/0'). */
  readonly xpub: string;
  /** The address of deposit index i (m/44'/195'/0'/0/i). */
  address(index: number): TronAddress;
  /** The hot wallet's address (m/44'/195'/0'/1/0). */
  readonly hotWalletAddress: TronAddress;
};

/** What the signing role holds: the same addresses, and their private keys. */
export type DepositSigningKey = DepositAddressKey & {
  /** The 32-byte secp256k1 private key of deposit index i. Never log it, never store it in clear. */
  privateKey(index: number): Uint8Array;
  /** The hot wallet's 32-byte private key. Never log it, never store it in clear. */
  hotWalletPrivateKey(): Uint8Array;
  /** What JSON.stringify (and so a logger) prints: the xpub only. */
  toJSON(): { xpub: string };
};

export class HdKeyError extends Error {
  override readonly name = 'HdKeyError';
}

/** The API role's key from an account-level xpub (m/44'/195'/0'); an xprv or another depth is refused. */
export function depositAddressKeyFromXpub(xpub: string): DepositAddressKey {
  let account: HDKey;
  try {
    account = HDKey.fromExtendedKey(xpub);
  } catch {
    throw new HdKeyError('is not a valid extended public key (xpub…)');
  }
  if (account.privateKey) throw new HdKeyError("holds a private key: the API role takes only the account's xpub");
  if (account.depth !== ACCOUNT_DEPTH)
    throw new HdKeyError(
      `is an extended key of depth ${account.depth}; the account key ${TRON_ACCOUNT_PATH} has depth 3`,
    );
  return addressKeyOf(account);
}

/** The signing key from a BIP39 mnemonic (English word list, checksum checked) and an optional passphrase. */
export function signingKeyFromMnemonic(mnemonic: string, passphrase = ''): DepositSigningKey {
  const words = mnemonic.trim().split(/\s+/).join(' ');
  if (!validateMnemonic(words, english))
    throw new HdKeyError('is not a valid BIP39 mnemonic (English words with a checksum)');
  return signingKeyOf(HDKey.fromMasterSeed(mnemonicToSeedSync(words, passphrase)).derive(TRON_ACCOUNT_PATH));
}

/**
 * The signing key from an xprv: either the master key (depth 0), from which
 * the account path is derived, or the account key m/44'/195'/0' itself (depth 3).
 */
export function signingKeyFromXprv(xprv: string): DepositSigningKey {
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(xprv);
  } catch {
    throw new HdKeyError('is not a valid extended private key (xprv…)');
  }
  if (!key.privateKey) throw new HdKeyError('is an extended public key; signing needs the xprv');
  if (key.depth === 0) return signingKeyOf(key.derive(TRON_ACCOUNT_PATH));
  if (key.depth === ACCOUNT_DEPTH) return signingKeyOf(key);
  throw new HdKeyError(
    `is an extended key of depth ${key.depth}; give the master key (depth 0) or the account key ${TRON_ACCOUNT_PATH} (depth 3)`,
  );
}

/** Refuses what is not a non-hardened child index. */
export function assertDepositIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0 || index >= DEPOSIT_INDEX_LIMIT) {
    throw new RangeError(`a deposit index is a whole number 0 ≤ i < 2^31, got ${index}`);
  }
}

function addressKeyOf(account: HDKey): DepositAddressKey {
  const chain = account.deriveChild(DEPOSIT_CHAIN);
  const hotWalletPublicKey = account.deriveChild(HOT_WALLET_CHAIN).deriveChild(HOT_WALLET_INDEX).publicKey;
  if (!hotWalletPublicKey) throw new HdKeyError('derived no public key');
  return {
    xpub: account.publicExtendedKey,
    hotWalletAddress: tronAddressFromPublicKey(hotWalletPublicKey),
    address(index) {
      assertDepositIndex(index);
      const publicKey = chain.deriveChild(index).publicKey;
      if (!publicKey) throw new HdKeyError('derived no public key');
      return tronAddressFromPublicKey(publicKey);
    },
  };
}

function signingKeyOf(account: HDKey): DepositSigningKey {
  const chain = account.deriveChild(DEPOSIT_CHAIN);
  // Addresses come from the public side alone, exactly as the API role derives them.
  const addressKey = addressKeyOf(HDKey.fromExtendedKey(account.publicExtendedKey));
  return {
    xpub: addressKey.xpub,
    address: addressKey.address,
    hotWalletAddress: addressKey.hotWalletAddress,
    privateKey(index) {
      assertDepositIndex(index);
      const privateKey = chain.deriveChild(index).privateKey;
      if (!privateKey) throw new HdKeyError('derived no private key');
      return privateKey;
    },
    hotWalletPrivateKey() {
      const privateKey = account.deriveChild(HOT_WALLET_CHAIN).deriveChild(HOT_WALLET_INDEX).privateKey;
      if (!privateKey) throw new HdKeyError('derived no private key');
      return privateKey;
    },
    toJSON: () => ({ xpub: addressKey.xpub }),
  };
}
