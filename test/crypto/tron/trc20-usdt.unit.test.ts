import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { parseTronHexAddress, tronAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import {
  addressFromWord,
  addressWord,
  BALANCE_OF_SELECTOR,
  balanceOfCalldata,
  decodeBalanceOfCalldata,
  decodeTransferCalldata,
  TRANSFER_EVENT_TOPIC,
  TRANSFER_SELECTOR,
  transferCalldata,
  uint256FromWord,
  uint256Word,
  USDT_CONTRACT_MAINNET,
  USDT_CONTRACT_NILE,
  USDT_DECIMALS,
} from '../../../src/crypto/tron/trc20-usdt.ts';

function fromHex(hex: string): TronAddress {
  const parsed = parseTronHexAddress(hex);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.address;
}

/** The calldata of TRON's documented Nile transfer (docs/tron.md §1.2 raw_data_hex): 100 base units to 41088a2b…5884. */
const DOC_CALLDATA =
  'a9059cbb000000000000000000000000088a2bfcb1c7271029fd69a66859d555608958840000000000000000000000000000000000000000000000000000000000000064';

describe('USDT contract constants (docs/tron.md §1.1, §1.7, Appendix A)', () => {
  it('names the mainnet and Nile contracts and six decimals', () => {
    expect(USDT_CONTRACT_MAINNET).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(USDT_CONTRACT_NILE).toBe('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf');
    expect(USDT_DECIMALS).toBe(6);
  });

  it('has the transfer and balanceOf selectors and the Transfer topic', () => {
    expect(bytesToHex(TRANSFER_SELECTOR)).toBe('a9059cbb');
    expect(bytesToHex(BALANCE_OF_SELECTOR)).toBe('70a08231');
    expect(TRANSFER_EVENT_TOPIC).toBe('ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
  });
});

describe('transfer calldata', () => {
  const recipient = fromHex('41088a2bfcb1c7271029fd69a66859d55560895884');

  it("reproduces the calldata inside the docs' raw_data_hex", () => {
    expect(bytesToHex(transferCalldata(recipient, 100n))).toBe(DOC_CALLDATA);
  });

  it('reads it back', () => {
    expect(decodeTransferCalldata(hexToBytes(DOC_CALLDATA))).toEqual({ ok: true, to: recipient, amount: 100n });
  });

  it('encodes amounts at both ends of uint256 and refuses beyond them', () => {
    expect(decodeTransferCalldata(transferCalldata(recipient, 0n))).toMatchObject({ ok: true, amount: 0n });
    const largest = (1n << 256n) - 1n;
    expect(decodeTransferCalldata(transferCalldata(recipient, largest))).toMatchObject({ ok: true, amount: largest });
    expect(() => transferCalldata(recipient, 1n << 256n)).toThrow(RangeError);
    expect(() => transferCalldata(recipient, -1n)).toThrow(RangeError);
  });

  it('refuses a wrong length, another selector and dirty padding', () => {
    const good = hexToBytes(DOC_CALLDATA);
    expect(decodeTransferCalldata(good.subarray(0, 67))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/68 bytes, got 67/),
    });
    expect(decodeTransferCalldata(Uint8Array.of(...good, 0))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/got 69/),
    });
    const otherSelector = good.slice();
    otherSelector[0] = 0x23; // transferFrom is 23b872dd
    expect(decodeTransferCalldata(otherSelector)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/selector/),
    });
    const dirty = good.slice();
    dirty[4 + 11] = 0x41; // a 0x41-prefixed address pushed into the padding
    expect(decodeTransferCalldata(dirty)).toMatchObject({ ok: false, problem: expect.stringMatching(/padding/) });
  });
});

describe('balanceOf calldata and ABI words', () => {
  it('is the selector and the owner word, and reads back', () => {
    const owner = tronAddress('TLHx2Ta9WwtwDjgGxyeifHs5ipmJrJAbZ3');
    const data = balanceOfCalldata(owner);
    expect(bytesToHex(data)).toBe('70a08231000000000000000000000000713ca8ee9c3db6bdc947b8e0c7846645307e6e63');
    expect(decodeBalanceOfCalldata(data)).toBe(owner);
    expect(decodeBalanceOfCalldata(data.subarray(0, 35))).toBeUndefined();
    expect(decodeBalanceOfCalldata(transferCalldata(owner, 1n))).toBeUndefined();
  });

  it('turns addresses and amounts into words and back', () => {
    const owner = tronAddress('TLHx2Ta9WwtwDjgGxyeifHs5ipmJrJAbZ3');
    expect(addressFromWord(addressWord(owner))).toBe(owner);
    expect(addressFromWord(new Uint8Array(31))).toBeUndefined();
    expect(uint256FromWord(uint256Word(1_000_000n))).toBe(1_000_000n);
    expect(bytesToHex(uint256Word(1_000_000n))).toBe(`${'0'.repeat(58)}0f4240`);
    expect(() => uint256FromWord(new Uint8Array(33))).toThrow(RangeError);
  });
});
