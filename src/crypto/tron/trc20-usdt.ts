// USDT on TRON is a TRC20 (ERC-20 shaped) contract: a payment is a call of
// `transfer(address,uint256)` and a deposit is seen as its `Transfer` event
// (docs/tron.md §1.2, §1.7). This file holds the contract's constants and the ABI
// calldata of the two calls we make, built and read without an ABI library:
// a 4-byte selector and 32-byte words.
import { bytesToNumberBE, numberToBytesBE } from '@noble/curves/utils.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { ASSET_SCALE } from '../../money/asset.ts';
import { tronAddress, tronAddressFromEvm, tronAddressToEvm, type TronAddress } from './address.ts';

/** Tether USD on TRON mainnet (hex 41a614f803b6fd780986a42c78ec9c7f77e6ded13c). */
export const USDT_CONTRACT_MAINNET: TronAddress = tronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
/** The "TetherToken" on the Nile testnet used by TRON's own documentation. */
export const USDT_CONTRACT_NILE: TronAddress = tronAddress('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf');
/** USDT's `decimals()`: amounts on chain are micro-USDT, our USDT minor unit. */
export const USDT_DECIMALS = ASSET_SCALE.USDT;

const WORD_BYTES = 32;
const SELECTOR_BYTES = 4;

/** keccak256("transfer(address,uint256)")[0..4] = a9059cbb. */
export const TRANSFER_SELECTOR = functionSelector('transfer(address,uint256)');
/** keccak256("transferFrom(address,address,uint256)")[0..4] = 23b872dd. */
const TRANSFER_FROM_SELECTOR = functionSelector('transferFrom(address,address,uint256)');
/** keccak256("balanceOf(address)")[0..4] = 70a08231. */
export const BALANCE_OF_SELECTOR = functionSelector('balanceOf(address)');
/** keccak256("isBlackListed(address)")[0..4] = e47d6060: Tether's public blacklist mapping's getter. */
export const IS_BLACKLISTED_SELECTOR = functionSelector('isBlackListed(address)');
/** topics[0] of every ERC-20 Transfer log, hex without 0x: ddf252ad…b3ef. */
export const TRANSFER_EVENT_TOPIC = bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')));

const UINT256_LIMIT = 1n << 256n;
/** selector + recipient word + amount word. */
const TRANSFER_CALLDATA_BYTES = SELECTOR_BYTES + 2 * WORD_BYTES;

export type DecodedTransferCall =
  | { readonly ok: true; readonly to: TronAddress; readonly amount: bigint }
  | { readonly ok: false; readonly problem: string };

/** `transfer(to, amount)` calldata; `amount` in base units (micro-USDT), 0 ≤ amount < 2^256. */
export function transferCalldata(to: TronAddress, amount: bigint): Uint8Array {
  const data = new Uint8Array(TRANSFER_CALLDATA_BYTES);
  data.set(TRANSFER_SELECTOR, 0);
  data.set(addressWord(to), SELECTOR_BYTES);
  data.set(uint256Word(amount), SELECTOR_BYTES + WORD_BYTES);
  return data;
}

/** `balanceOf(owner)` calldata, for `triggerconstantcontract`. */
export function balanceOfCalldata(owner: TronAddress): Uint8Array {
  const data = new Uint8Array(SELECTOR_BYTES + WORD_BYTES);
  data.set(BALANCE_OF_SELECTOR, 0);
  data.set(addressWord(owner), SELECTOR_BYTES);
  return data;
}

/**
 * Reads `transfer(to, amount)` calldata strictly: exactly 68 bytes, the
 * transfer selector, and an address word whose 12 padding bytes are zero.
 */
export function decodeTransferCalldata(data: Uint8Array): DecodedTransferCall {
  if (data.length !== TRANSFER_CALLDATA_BYTES)
    return { ok: false, problem: `transfer calldata is 68 bytes, got ${data.length}` };
  if (!startsWith(data, TRANSFER_SELECTOR))
    return { ok: false, problem: `selector ${bytesToHex(data.subarray(0, 4))} is not transfer (a9059cbb)` };
  const to = addressFromWord(data.subarray(SELECTOR_BYTES, SELECTOR_BYTES + WORD_BYTES));
  if (to === undefined) return { ok: false, problem: 'the recipient word has non-zero padding' };
  return { ok: true, to, amount: uint256FromWord(data.subarray(SELECTOR_BYTES + WORD_BYTES)) };
}

/** selector + from word + recipient word + amount word. */
const TRANSFER_FROM_CALLDATA_BYTES = SELECTOR_BYTES + 3 * WORD_BYTES;

/** What a USDT call moves, read from its calldata: `transfer` moves the caller's tokens, `transferFrom` those of `from`. */
export type DecodedTokenMove = {
  readonly from: TronAddress | 'caller';
  readonly to: TronAddress;
  readonly amount: bigint;
};

/**
 * Reads `transfer(to, amount)` or `transferFrom(from, to, amount)` calldata
 * strictly (exact length, zero address padding); undefined for anything else.
 */
export function decodeTokenMoveCalldata(data: Uint8Array): DecodedTokenMove | undefined {
  if (startsWith(data, TRANSFER_SELECTOR)) {
    const call = decodeTransferCalldata(data);
    return call.ok ? { from: 'caller', to: call.to, amount: call.amount } : undefined;
  }
  if (data.length !== TRANSFER_FROM_CALLDATA_BYTES || !startsWith(data, TRANSFER_FROM_SELECTOR)) return undefined;
  const from = addressFromWord(data.subarray(SELECTOR_BYTES, SELECTOR_BYTES + WORD_BYTES));
  const to = addressFromWord(data.subarray(SELECTOR_BYTES + WORD_BYTES, SELECTOR_BYTES + 2 * WORD_BYTES));
  if (from === undefined || to === undefined) return undefined;
  return { from, to, amount: uint256FromWord(data.subarray(SELECTOR_BYTES + 2 * WORD_BYTES)) };
}

/** Reads `balanceOf(owner)` calldata strictly; undefined when it is anything else. */
export function decodeBalanceOfCalldata(data: Uint8Array): TronAddress | undefined {
  if (data.length !== SELECTOR_BYTES + WORD_BYTES || !startsWith(data, BALANCE_OF_SELECTOR)) return undefined;
  return addressFromWord(data.subarray(SELECTOR_BYTES));
}

/** The 32-byte ABI word (or event topic) of an address: 12 zero bytes ‖ 20-byte EVM form. */
export function addressWord(address: TronAddress): Uint8Array {
  const word = new Uint8Array(WORD_BYTES);
  word.set(tronAddressToEvm(address), WORD_BYTES - 20);
  return word;
}

/** The address in a 32-byte ABI word or topic; undefined when the padding is not zero. */
export function addressFromWord(word: Uint8Array): TronAddress | undefined {
  if (word.length !== WORD_BYTES || word.subarray(0, WORD_BYTES - 20).some((byte) => byte !== 0)) return undefined;
  return tronAddressFromEvm(word.subarray(WORD_BYTES - 20));
}

/** A uint256 as a 32-byte big-endian word. */
export function uint256Word(value: bigint): Uint8Array {
  if (value < 0n || value >= UINT256_LIMIT) throw new RangeError(`a uint256 is 0 ≤ value < 2^256, got ${value}`);
  return numberToBytesBE(value, WORD_BYTES);
}

/** The uint256 of a 32-byte big-endian word (a balance, an event's amount). */
export function uint256FromWord(word: Uint8Array): bigint {
  if (word.length !== WORD_BYTES) throw new RangeError(`an ABI word is 32 bytes, got ${word.length}`);
  return bytesToNumberBE(word);
}

function functionSelector(signature: string): Uint8Array {
  return keccak_256(utf8ToBytes(signature)).slice(0, SELECTOR_BYTES);
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  return prefix.every((byte, index) => data[index] === byte);
}
