// Envelope encryption of the secrets the gateway must be able to read back
// (webhook signing secrets now, private keys next): each secret gets its own
// random data key; the secret is sealed with AES-256-GCM under that data key,
// bound to its context (e.g. "webhook_secret:shop_…") so a sealed value copied
// to another row does not open; the data key is wrapped with AES-256-GCM under
// the root key. Rotating the root key re-wraps data keys only.
//
//   v1.<root key id>.<wrapped data key: iv|ciphertext|tag>.<sealed secret: iv|ciphertext|tag>   (base64url parts)
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Keyring, RootKey } from './keyring.ts';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const DATA_KEY_BYTES = 32;

export class SealedValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedValueError';
  }
}

function encrypt(key: Buffer, plaintext: Buffer, additionalData: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(additionalData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, box: Buffer, additionalData: string, what: string): Buffer {
  if (box.length < IV_BYTES + TAG_BYTES) throw new SealedValueError(`${what} is truncated`);
  const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(additionalData, 'utf8'));
  decipher.setAuthTag(box.subarray(box.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(box.subarray(IV_BYTES, box.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SealedValueError(`${what} does not open: wrong key, wrong context, or tampered`);
  }
}

function wrapDataKey(rootKey: RootKey, dataKey: Buffer): Buffer {
  return encrypt(rootKey.key, dataKey, `paygate-data-key:${rootKey.id}`);
}

interface Parsed {
  readonly rootKeyId: string;
  readonly wrappedDataKey: Buffer;
  readonly sealed: Buffer;
}

function parse(value: string): Parsed {
  const parts = value.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SealedValueError('not a sealed value of this gateway');
  return {
    rootKeyId: parts[1]!,
    wrappedDataKey: Buffer.from(parts[2]!, 'base64url'),
    sealed: Buffer.from(parts[3]!, 'base64url'),
  };
}

function format(rootKeyId: string, wrappedDataKey: Buffer, sealed: Buffer): string {
  return [VERSION, rootKeyId, wrappedDataKey.toString('base64url'), sealed.toString('base64url')].join('.');
}

function unwrap(keyring: Keyring, parsed: Parsed): Buffer {
  const rootKey = keyring.find(parsed.rootKeyId);
  if (!rootKey) throw new SealedValueError(`sealed under root key ${parsed.rootKeyId}, which is not configured`);
  return decrypt(rootKey.key, parsed.wrappedDataKey, `paygate-data-key:${rootKey.id}`, 'the data key');
}

/** Seals `plaintext` under a fresh data key wrapped by the current root key. */
export function seal(keyring: Keyring, plaintext: string, context: string): string {
  const dataKey = randomBytes(DATA_KEY_BYTES);
  try {
    return format(
      keyring.current.id,
      wrapDataKey(keyring.current, dataKey),
      encrypt(dataKey, Buffer.from(plaintext, 'utf8'), context),
    );
  } finally {
    dataKey.fill(0);
  }
}

/** Opens a sealed value; refuses a value sealed for another context. */
export function open(keyring: Keyring, value: string, context: string): string {
  const parsed = parse(value);
  const dataKey = unwrap(keyring, parsed);
  try {
    return decrypt(dataKey, parsed.sealed, context, 'the sealed value').toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/** True when the value's data key is wrapped by a root key other than the current one. */
export function needsRewrap(keyring: Keyring, value: string): boolean {
  return parse(value).rootKeyId !== keyring.current.id;
}

/** The same sealed secret with its data key re-wrapped under the current root key. */
export function rewrap(keyring: Keyring, value: string): string {
  const parsed = parse(value);
  if (parsed.rootKeyId === keyring.current.id) return value;
  const dataKey = unwrap(keyring, parsed);
  try {
    return format(keyring.current.id, wrapDataKey(keyring.current, dataKey), parsed.sealed);
  } finally {
    dataKey.fill(0);
  }
}
