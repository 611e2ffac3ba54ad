// Payer accounts of the simulated chain: HD keys (m/44'/195'/0'/0/i, the
// same derivation as deposit keys) from a mnemonic made from the chain's
// seed, so a seed always yields the same funded payers and tests can name them.
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { entropyToMnemonic } from '@scure/bip39';
import { wordlist as english } from '@scure/bip39/wordlists/english.js';
import { signingKeyFromMnemonic } from '../keys/hd-keys.ts';
import type { TronAddress } from '../tron/address.ts';

export interface PayerKey {
  readonly address: TronAddress;
  readonly privateKey: Uint8Array;
}

export function payerKeys(seed: string, count: number): PayerKey[] {
  const mnemonic = entropyToMnemonic(sha256(utf8ToBytes(`paygate simulated chain payers\0${seed}`)), english);
  const key = signingKeyFromMnemonic(mnemonic);
  return Array.from({ length: count }, (_, index) => ({
    address: key.address(index),
    privateKey: key.privateKey(index),
  }));
}
