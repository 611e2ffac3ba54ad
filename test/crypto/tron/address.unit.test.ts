import { base58, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import {
  parseTronAddress,
  parseTronHexAddress,
  tronAddress,
  tronAddressFromBytes,
  tronAddressFromEvm,
  tronAddressFromPrivateKey,
  tronAddressFromPublicKey,
  tronAddressToBytes,
  tronAddressToEvm,
  tronAddressToHex,
} from '../../../src/crypto/tron/address.ts';
import { secp256k1 } from '@noble/curves/secp256k1.js';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const base58check = createBase58check(sha256);

function problemOf(text: string): string {
  const parsed = parseTronAddress(text);
  if (parsed.ok) throw new Error(`${text} was accepted`);
  return parsed.problem;
}

describe('TRON address spellings (docs/tron.md §1.1)', () => {
  it('reads the USDT contract and gives its hex and EVM forms', () => {
    const address = tronAddress(USDT);
    expect(tronAddressToHex(address)).toBe('41a614f803b6fd780986a42c78ec9c7f77e6ded13c');
    expect(bytesToHex(tronAddressToEvm(address))).toBe('a614f803b6fd780986a42c78ec9c7f77e6ded13c');
    expect(tronAddressFromEvm(tronAddressToEvm(address))).toBe(USDT);
    expect(tronAddressFromBytes(tronAddressToBytes(address))).toBe(USDT);
  });

  it('reads the Nile TetherToken of the official docs from its hex spelling', () => {
    const parsed = parseTronHexAddress('41eca9bc828a3005b9a3b909f2cc5c2a54794de05f');
    expect(parsed).toEqual({ ok: true, address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' });
  });

  it('reads upper-case hex as nodes and other tools print it', () => {
    // A published pair (CryptoTron::AddrTools documentation).
    expect(parseTronHexAddress('419D1015E669C2DF831003C5C54CEB48DA613D9979')).toEqual({
      ok: true,
      address: 'TQHgMpVzWkhSsRB4BzZgmV8uW4cFL8eaBr',
    });
  });

  it('maps a 20-byte EVM address to base58 (a published pair: Dune to_tron_address)', () => {
    expect(tronAddressFromEvm(hexToBytes('503aa4ad108bd3a89ba0310e23b49fb654cd6986'))).toBe(
      'THHRK1bA7YRPZBcLnTP1SZy9ipUpsRwpo6',
    );
  });

  it("derives the address a node's /wallet/generateaddress printed for its private key", () => {
    const privateKey = hexToBytes('097c8ba8a310f39a41a667d35a20000cd21d58c7322484b584c4ada8ebd3ec06');
    const address = tronAddressFromPrivateKey(privateKey);
    expect(address).toBe('TLHx2Ta9WwtwDjgGxyeifHs5ipmJrJAbZ3');
    expect(tronAddressToHex(address)).toBe('41713ca8ee9c3db6bdc947b8e0c7846645307e6e63');
  });

  it('gives the same address from the compressed and the uncompressed public key', () => {
    const privateKey = hexToBytes('097c8ba8a310f39a41a667d35a20000cd21d58c7322484b584c4ada8ebd3ec06');
    expect(tronAddressFromPublicKey(secp256k1.getPublicKey(privateKey, true))).toBe(
      'TLHx2Ta9WwtwDjgGxyeifHs5ipmJrJAbZ3',
    );
    expect(tronAddressFromPublicKey(secp256k1.getPublicKey(privateKey, false))).toBe(
      'TLHx2Ta9WwtwDjgGxyeifHs5ipmJrJAbZ3',
    );
  });
});

describe('parseTronAddress refuses what is not exactly a TRON address', () => {
  it('accepts a valid address', () => {
    expect(parseTronAddress(USDT)).toEqual({ ok: true, address: USDT });
  });

  it('refuses the empty string', () => {
    expect(problemOf('')).toMatch(/empty/);
  });

  it('refuses 33 and 35 characters, accepts 34', () => {
    expect(problemOf(USDT.slice(0, 33))).toMatch(/34 characters, got 33/);
    expect(problemOf(`${USDT}1`)).toMatch(/34 characters, got 35/);
    expect(parseTronAddress(USDT).ok).toBe(true);
  });

  it('refuses surrounding whitespace rather than trimming it', () => {
    expect(problemOf(` ${USDT.slice(1)}`)).toMatch(/contains " "/);
  });

  it.each(['0', 'O', 'I', 'l', '+', 'é'])('refuses the non-Base58 character %s', (character) => {
    expect(problemOf(`${USDT.slice(0, 20)}${character}${USDT.slice(21)}`)).toContain(
      `contains ${JSON.stringify(character)}`,
    );
  });

  it('refuses a mistyped character (bad checksum), and accepts the original', () => {
    const mistyped = `${USDT.slice(0, 33)}${USDT.endsWith('t') ? 'u' : 't'}`;
    expect(problemOf(mistyped)).toMatch(/checksum/);
  });

  it('refuses 34 Base58 characters that decode to other than 25 bytes', () => {
    // A leading '1' is a zero byte: 34 characters may hold more than 25 bytes.
    for (const text of ['1'.repeat(34), `1${'z'.repeat(33)}`]) {
      expect(base58.decode(text).length).toBeGreaterThan(25);
      expect(problemOf(text)).toMatch(/25 bytes, but decodes to (34|26)/);
    }
  });

  it('refuses a Bitcoin address: good checksum, 25 bytes, version byte 0x00', () => {
    expect(problemOf('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')).toMatch(/version byte 0x00 instead of 0x41/);
  });

  it('refuses version byte 0x42 and 0x40 with a good checksum, accepts 0x41', () => {
    const account = tronAddressToEvm(tronAddress(USDT));
    for (const version of [0x40, 0x42]) {
      const text = base58check.encode(Uint8Array.of(version, ...account));
      expect(text).toHaveLength(34);
      expect(problemOf(text)).toMatch(new RegExp(`version byte 0x${version.toString(16)}`));
    }
    expect(parseTronAddress(base58check.encode(Uint8Array.of(0x41, ...account)))).toEqual({ ok: true, address: USDT });
  });
});

describe('parseTronHexAddress (a node answer is untrusted input)', () => {
  it.each([
    ['0x-prefixed', '0x41a614f803b6fd780986a42c78ec9c7f77e6ded13c'],
    ['20 bytes (EVM form)', 'a614f803b6fd780986a42c78ec9c7f77e6ded13c'],
    ['22 bytes', '41a614f803b6fd780986a42c78ec9c7f77e6ded13c00'],
    ['non-hex', '41a614f803b6fd780986a42c78ec9c7f77e6ded13g'],
    ['empty', ''],
  ])('refuses %s', (_name, hex) => {
    expect(parseTronHexAddress(hex).ok).toBe(false);
  });

  it('refuses version byte 0x42, accepts 0x41', () => {
    expect(parseTronHexAddress('42a614f803b6fd780986a42c78ec9c7f77e6ded13c')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/0x42/),
    });
    expect(parseTronHexAddress('41a614f803b6fd780986a42c78ec9c7f77e6ded13c')).toEqual({ ok: true, address: USDT });
  });

  it('tronAddressFromBytes and tronAddressFromEvm refuse wrong lengths and versions', () => {
    expect(() => tronAddressFromBytes(new Uint8Array(20))).toThrow(/21 bytes/);
    expect(() => tronAddressFromBytes(new Uint8Array(21))).toThrow(/0x41/);
    expect(() => tronAddressFromEvm(new Uint8Array(21))).toThrow(/20 bytes/);
  });
});
