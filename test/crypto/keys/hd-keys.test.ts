import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { TronWeb } from 'tronweb';
import { describe, expect, it } from 'vitest';
import {
  assertDepositIndex,
  DEPOSIT_INDEX_LIMIT,
  depositAddressKeyFromXpub,
  signingKeyFromMnemonic,
  signingKeyFromXprv,
  TRON_ACCOUNT_PATH,
} from '../../../src/crypto/keys/hd-keys.ts';
import { tronAddressFromPrivateKey } from '../../../src/crypto/tron/address.ts';

// The standard BIP39 test mnemonic; docs/tron.md §1.1 lists its first two TRON addresses.
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const master = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));
const accountXpub = master.derive(TRON_ACCOUNT_PATH).publicExtendedKey;

function tronwebAddress(index: number): string {
  return TronWeb.fromMnemonic(MNEMONIC, `m/44'/195'/0'/0/${index}`).address;
}

describe("deposit addresses at m/44'/195'/0'/0/i", () => {
  const signing = signingKeyFromMnemonic(MNEMONIC);
  const api = depositAddressKeyFromXpub(accountXpub);

  it('match docs/tron.md §1.1 and TronWeb.fromMnemonic for i = 0 and 1', () => {
    expect(api.address(0)).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    expect(api.address(1)).toBe('TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK');
    expect([0, 1].map(tronwebAddress)).toEqual([api.address(0), api.address(1)]);
  });

  it("give the hot wallet m/44'/195'/0'/1/0, as TronWeb.fromMnemonic derives it, from the xpub and with its private key", () => {
    const expected = TronWeb.fromMnemonic(MNEMONIC, "m/44'/195'/0'/1/0").address;
    expect(api.hotWalletAddress).toBe(expected);
    expect(signing.hotWalletAddress).toBe(expected);
    expect(tronAddressFromPrivateKey(signing.hotWalletPrivateKey())).toBe(expected);
    expect(api.hotWalletAddress).not.toBe(api.address(0));
  });

  it('match TronWeb.fromMnemonic at indexes far apart, up to the last non-hardened one', () => {
    for (const index of [2, 97, 65_536, 1_000_003, DEPOSIT_INDEX_LIMIT - 1]) {
      expect(api.address(index)).toBe(tronwebAddress(index));
    }
  });

  it('from the xpub alone equal those of the private keys the signer derives, for 300 indexes', () => {
    const indexes = [
      ...Array.from({ length: 250 }, (_, index) => index),
      ...Array.from({ length: 50 }, (_, step) => 12_345 + step * 40_000_019),
    ];
    for (const index of indexes) {
      expect(tronAddressFromPrivateKey(signing.privateKey(index))).toBe(api.address(index));
      expect(signing.address(index)).toBe(api.address(index));
    }
  });

  it('share one account xpub between the signer and the API role', () => {
    expect(signing.xpub).toBe(accountXpub);
    expect(api.xpub).toBe(accountXpub);
  });

  it('refuse indexes outside 0 ≤ i < 2^31 (hardened or not whole)', () => {
    for (const index of [-1, 1.5, DEPOSIT_INDEX_LIMIT, 2 ** 53, Number.NaN]) {
      expect(() => api.address(index)).toThrow(RangeError);
      expect(() => signing.privateKey(index)).toThrow(RangeError);
    }
    expect(() => assertDepositIndex(0)).not.toThrow();
    expect(() => assertDepositIndex(DEPOSIT_INDEX_LIMIT - 1)).not.toThrow();
  });
});

describe('the API role key takes the account xpub only', () => {
  it('refuses an xprv, saying why, without echoing it', () => {
    const xprv = master.derive(TRON_ACCOUNT_PATH).privateExtendedKey;
    expect(() => depositAddressKeyFromXpub(xprv)).toThrow(/holds a private key/);
    try {
      depositAddressKeyFromXpub(xprv);
    } catch (error) {
      expect((error as Error).message).not.toContain(xprv.slice(4, 20));
    }
  });

  it('refuses the master xpub (depth 0) and the chain xpub (depth 4); accepts depth 3', () => {
    expect(() => depositAddressKeyFromXpub(master.publicExtendedKey)).toThrow(/depth 0/);
    expect(() => depositAddressKeyFromXpub(master.derive(`${TRON_ACCOUNT_PATH}/0`).publicExtendedKey)).toThrow(
      /depth 4/,
    );
    expect(depositAddressKeyFromXpub(accountXpub).xpub).toBe(accountXpub);
  });

  it('refuses text that is not an extended key, and a mistyped one', () => {
    expect(() => depositAddressKeyFromXpub('xpub-not-a-key')).toThrow(/not a valid extended public key/);
    const mistyped = `${accountXpub.slice(0, -1)}${accountXpub.endsWith('a') ? 'b' : 'a'}`;
    expect(() => depositAddressKeyFromXpub(mistyped)).toThrow(/not a valid extended public key/);
  });
});

describe('the signing key', () => {
  it('is the same from the mnemonic, the master xprv and the account xprv', () => {
    const fromMnemonic = signingKeyFromMnemonic(MNEMONIC);
    const fromMaster = signingKeyFromXprv(master.privateExtendedKey);
    const fromAccount = signingKeyFromXprv(master.derive(TRON_ACCOUNT_PATH).privateExtendedKey);
    for (const index of [0, 1, 4_000_000]) {
      const expected = fromMnemonic.address(index);
      expect(fromMaster.address(index)).toBe(expected);
      expect(fromAccount.address(index)).toBe(expected);
      expect(fromAccount.privateKey(index)).toEqual(fromMnemonic.privateKey(index));
    }
  });

  it('takes a mnemonic with extra spaces and new lines', () => {
    expect(signingKeyFromMnemonic(`  ${MNEMONIC.replaceAll(' ', '  \n')}\n`).address(0)).toBe(
      'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH',
    );
  });

  it('refuses a mnemonic with a bad checksum or an unknown word', () => {
    expect(() => signingKeyFromMnemonic(Array.from({ length: 12 }, () => 'abandon').join(' '))).toThrow(
      /not a valid BIP39 mnemonic/,
    );
    expect(() => signingKeyFromMnemonic(MNEMONIC.replace('about', 'aboot'))).toThrow(/not a valid BIP39 mnemonic/);
  });

  it('takes a passphrase, which gives other addresses', () => {
    expect(signingKeyFromMnemonic(MNEMONIC, 'TREZOR').address(0)).not.toBe(signingKeyFromMnemonic(MNEMONIC).address(0));
  });

  it('refuses an xpub and an xprv of another depth', () => {
    expect(() => signingKeyFromXprv(accountXpub)).toThrow(/signing needs the xprv/);
    expect(() => signingKeyFromXprv(master.derive("m/44'/195'").privateExtendedKey)).toThrow(/depth 2/);
  });

  it('prints only its xpub through JSON.stringify (what a logger does)', () => {
    const signing = signingKeyFromXprv(master.privateExtendedKey);
    const printed = JSON.stringify({ key: signing });
    expect(printed).toBe(JSON.stringify({ key: { xpub: accountXpub } }));
    expect(printed).not.toContain('xprv');
  });
});
