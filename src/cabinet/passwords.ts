// Cabinet passwords: argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane)
// through @node-rs/argon2. Hashes made before the cabinet (node:crypto scrypt with
// its defaults, `scrypt$salt$key`) still verify and are rehashed at the next sign-in.
import { hash, verify } from '@node-rs/argon2';
import { scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;
/** OWASP Password Storage Cheat Sheet, argon2id: m=19456 KiB, t=2, p=1. Algorithm 2 is argon2id (the library's default). */
const ARGON2ID = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID);
}

/** A hash of no password, verified against when the account does not exist: the answer takes as long either way. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    await verify(await (decoy ??= hashPassword('decoy password that matches nothing')), password);
    return false;
  }
  if (stored.startsWith('scrypt$')) return verifyLegacyScrypt(stored, password);
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** True when a hash is not argon2id with today's parameters: sign-in stores a fresh one. */
export function needsRehash(stored: string): boolean {
  return !stored.startsWith(
    `$argon2id$v=19$m=${ARGON2ID.memoryCost},t=${ARGON2ID.timeCost},p=${ARGON2ID.parallelism}$`,
  );
}

async function verifyLegacyScrypt(stored: string, password: string): Promise<boolean> {
  const [, salt, key] = stored.split('$');
  if (!salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const derived = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length);
  return derived.length === expected.length && timingSafeEqual(derived, expected);
}
