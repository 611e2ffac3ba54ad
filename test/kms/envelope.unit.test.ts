// Envelope encryption: round trips, refusals (wrong context, tampering, unknown
// root key), root key rotation by re-wrapping, and the root key file.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { needsRewrap, open, rewrap, seal } from '../../src/kms/envelope.ts';
import { createKeyring, generateRootKey, readRootKeyFile, rootKeyFromBase64 } from '../../src/kms/keyring.ts';

const keyA = rootKeyFromBase64(generateRootKey(), 'key A');
const keyB = rootKeyFromBase64(generateRootKey(), 'key B');

describe('sealed secrets', () => {
  it('open(seal(x)) is x for any text and context, and the sealed form never contains x', () => {
    const keyring = createKeyring(keyA);
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 0, maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 60 }),
        (secret, context) => {
          const sealed = seal(keyring, secret, context);
          expect(open(keyring, sealed, context)).toBe(secret);
          if (secret.length >= 4) expect(sealed).not.toContain(secret);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('two seals of one secret differ (fresh data key and nonce each time)', () => {
    const keyring = createKeyring(keyA);
    expect(seal(keyring, 'whsec_same', 'ctx')).not.toBe(seal(keyring, 'whsec_same', 'ctx'));
  });

  it('refuses another context, any flipped byte, and a root key that is not configured', () => {
    const keyring = createKeyring(keyA);
    const sealed = seal(keyring, 'whsec_secret', 'webhook_secret:shop_1');
    expect(() => open(keyring, sealed, 'webhook_secret:shop_2')).toThrow(/does not open/);
    const parts = sealed.split('.');
    for (const index of [2, 3]) {
      const bytes = Buffer.from(parts[index]!, 'base64url');
      bytes[bytes.length >> 1]! ^= 0x01;
      const tampered = parts.map((part, at) => (at === index ? bytes.toString('base64url') : part)).join('.');
      expect(() => open(keyring, tampered, 'webhook_secret:shop_1')).toThrow(/does not open/);
    }
    expect(() => open(createKeyring(keyB), sealed, 'webhook_secret:shop_1')).toThrow(
      `sealed under root key ${keyA.id}, which is not configured`,
    );
    expect(() => open(keyring, 'whsec_plaintext', 'webhook_secret:shop_1')).toThrow(/not a sealed value/);
  });

  it('rotation: the new key with the old one as previous opens old values; after re-wrapping the old key can go', () => {
    const sealed = seal(createKeyring(keyA), 'whsec_rotate_me', 'ctx');
    const during = createKeyring(keyB, [keyA]);
    expect(during.previousIds).toEqual([keyA.id]);
    expect(open(during, sealed, 'ctx')).toBe('whsec_rotate_me');
    expect(needsRewrap(during, sealed)).toBe(true);
    const rewrapped = rewrap(during, sealed);
    expect(needsRewrap(during, rewrapped)).toBe(false);
    // Only the data key's wrapping changed: the sealed secret itself is the same bytes.
    expect(rewrapped.split('.')[3]).toBe(sealed.split('.')[3]);
    expect(open(createKeyring(keyB), rewrapped, 'ctx')).toBe('whsec_rotate_me');
    expect(() => open(createKeyring(keyA), rewrapped, 'ctx')).toThrow(/not configured/);
    expect(rewrap(during, rewrapped)).toBe(rewrapped);
  });
});

describe('the root key file', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), 'paygate-kms-'));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('is generated once, readable by its owner only, and read back as the same key', async () => {
    const path = join(folder, 'data', 'root-key');
    const first = await readRootKeyFile(path, { createIfMissing: true });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const second = await readRootKeyFile(path, { createIfMissing: true });
    expect(second.id).toBe(first.id);
    expect(Buffer.compare(second.key, first.key)).toBe(0);
    expect((await readFile(path, 'utf8')).trim()).toHaveLength(44);
  });

  it('refuses a missing file when it may not create one, and a file that is not a 32-byte base64 key', async () => {
    await expect(readRootKeyFile(join(folder, 'absent'), { createIfMissing: false })).rejects.toThrow(
      /cannot read the root key file/,
    );
    const bad = join(folder, 'bad');
    await writeFile(bad, 'not a key\n');
    await expect(readRootKeyFile(bad, { createIfMissing: false })).rejects.toThrow(/must be 32 random bytes in base64/);
  });
});
