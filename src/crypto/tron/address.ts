// TRON addresses, strictly. Three spellings of one account exist (docs/tron.md §1.1):
// Base58Check `T…` (what people and our database see), 21-byte hex `41…` (the
// node's HTTP API without `visible`), and the 20-byte EVM form (inside ABI words
// and event topics). Anything that is not exactly 25 bytes, with a good checksum
// and version byte 0x41, is refused before it reaches an ABI word: a loose
// check sends money to "some other random address" (tronweb #507).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { base58, createBase58check } from '@scure/base';
import { LRUCache } from 'lru-cache';

/** The first byte of every TRON mainnet (and testnet) address. */
const TRON_ADDRESS_VERSION = 0x41;
/** Version byte + 20-byte account id. */
const TRON_ADDRESS_BYTES = 21;
/** Base58Check of 21 bytes + 4 checksum bytes is always 34 characters. */
const TRON_ADDRESS_LENGTH = 34;

/** A validated, canonical Base58Check TRON address (`T…`, 34 characters). */
export type TronAddress = string & { readonly __brand: 'TronAddress' };

export type ParsedTronAddress =
  { readonly ok: true; readonly address: TronAddress } | { readonly ok: false; readonly problem: string };

const base58check = createBase58check(sha256);
const BASE58_ALPHABET = /^[1-9A-HJ-NP-Za-km-z]*$/;
/** Longest text echoed back in a problem message. */
const ECHO_MAX = 8;

/**
 * Reads a Base58Check TRON address. On refusal, `problem` says which rule failed
 * in words that follow a field name: "`to_address` has a bad checksum …".
 */
export function parseTronAddress(text: string): ParsedTronAddress {
  if (text.length === 0) return refuse('must be a TRON address (34 characters starting with T), got an empty string');
  if (text.length !== TRON_ADDRESS_LENGTH)
    return refuse(`must be a TRON address of ${TRON_ADDRESS_LENGTH} characters, got ${text.length}`);
  if (!BASE58_ALPHABET.test(text)) {
    const bad = [...text].find((character) => !BASE58_ALPHABET.test(character)) ?? '';
    return refuse(
      `must be a TRON address in Base58 (no 0, O, I, l or symbols), but contains ${JSON.stringify(bad.slice(0, ECHO_MAX))}`,
    );
  }
  const decodedLength = base58.decode(text).length;
  if (decodedLength !== TRON_ADDRESS_BYTES + 4)
    return refuse(`must be a TRON address of 25 bytes, but decodes to ${decodedLength}`);
  let payload: Uint8Array;
  try {
    payload = base58check.decode(text);
  } catch {
    return refuse('is not a TRON address: its Base58Check checksum does not match (a mistyped character?)');
  }
  if (payload[0] !== TRON_ADDRESS_VERSION) {
    return refuse(
      `is not a TRON address: version byte 0x${hexByte(payload[0] ?? 0)} instead of 0x41 (an address of another network?)`,
    );
  }
  return { ok: true, address: text as TronAddress };
}

/**
 * Reads the node's hex spelling: 21 bytes `41…` (42 hex digits, either case,
 * no `0x`). A node's answer is untrusted input, so this is as strict as the
 * Base58 reader.
 */
export function parseTronHexAddress(hex: string): ParsedTronAddress {
  if (!/^[0-9a-fA-F]{42}$/.test(hex))
    return refuse(`must be a 21-byte hex TRON address (42 hex digits), got ${hex.length} characters`);
  const bytes = hexToBytes(hex);
  if (bytes[0] !== TRON_ADDRESS_VERSION)
    return refuse(`is not a TRON address: version byte 0x${hexByte(bytes[0] ?? 0)} instead of 0x41`);
  return { ok: true, address: tronAddressFromBytes(bytes) };
}

/** Parses or throws: for constants and values our own code produced. */
export function tronAddress(text: string): TronAddress {
  const parsed = parseTronAddress(text);
  if (!parsed.ok) throw new Error(`${JSON.stringify(text)} ${parsed.problem}`);
  return parsed.address;
}

/** The 21 bytes (0x41 ‖ account id) of an address. */
export function tronAddressToBytes(address: TronAddress): Uint8Array {
  return base58check.decode(address);
}

/** Hex spellings remembered, at most this many (then forgotten all at once). */
const HEX_SPELLINGS_MAX = 10_000;
const hexSpellings = new LRUCache<string, string>({ max: HEX_SPELLINGS_MAX });

/**
 * The node's hex spelling, lower case: `41a614f8…`. Remembered: the same
 * addresses (the USDT contract, the hot wallet, payers) are spelled for every
 * transaction a node answer or request holds, and each decoding checks a
 * double-SHA-256 checksum.
 */
export function tronAddressToHex(address: TronAddress): string {
  let hex = hexSpellings.get(address);
  if (hex === undefined) {
    hex = bytesToHex(tronAddressToBytes(address));
    hexSpellings.set(address, hex);
  }
  return hex;
}

/** The 20-byte EVM form (no version byte), as in ABI words and event topics. */
export function tronAddressToEvm(address: TronAddress): Uint8Array {
  return tronAddressToBytes(address).subarray(1);
}

/** The address of 21 bytes that must start with 0x41. */
export function tronAddressFromBytes(bytes: Uint8Array): TronAddress {
  if (bytes.length !== TRON_ADDRESS_BYTES || bytes[0] !== TRON_ADDRESS_VERSION) {
    throw new Error(`a TRON address is ${TRON_ADDRESS_BYTES} bytes starting with 0x41, got ${bytes.length} bytes`);
  }
  return base58check.encode(bytes) as TronAddress;
}

/** The address of a 20-byte EVM account id (from an ABI word or a topic). */
export function tronAddressFromEvm(evm20: Uint8Array): TronAddress {
  if (evm20.length !== TRON_ADDRESS_BYTES - 1) throw new Error(`an EVM address is 20 bytes, got ${evm20.length}`);
  const bytes = new Uint8Array(TRON_ADDRESS_BYTES);
  bytes[0] = TRON_ADDRESS_VERSION;
  bytes.set(evm20, 1);
  return tronAddressFromBytes(bytes);
}

/**
 * The address of a secp256k1 public key (33-byte compressed or 65-byte
 * uncompressed): 0x41 ‖ last 20 bytes of keccak256(uncompressed key without its 0x04).
 */
export function tronAddressFromPublicKey(publicKey: Uint8Array): TronAddress {
  const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return tronAddressFromEvm(keccak_256(uncompressed.subarray(1)).subarray(-20));
}

/** The address that a 32-byte secp256k1 private key controls. */
export function tronAddressFromPrivateKey(privateKey: Uint8Array): TronAddress {
  return tronAddressFromPublicKey(secp256k1.getPublicKey(privateKey, false));
}

function refuse(problem: string): ParsedTronAddress {
  return { ok: false, problem };
}

function hexByte(value: number): string {
  return value.toString(16).padStart(2, '0');
}
