import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToNumberBE, numberToBytesBE } from '@noble/curves/utils.js';
import { randomBytes } from 'node:crypto';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { tronAddress, tronAddressFromPrivateKey, tronAddressFromPublicKey } from '../../../src/crypto/tron/address.ts';
import {
  normalizedRecoveryId,
  recoverSignerAddress,
  signTransactionId,
  signTriggerSmartContract,
} from '../../../src/crypto/tron/signing.ts';
import { decodeSignedTransaction } from '../../../src/crypto/tron/transaction.ts';
import { transferCalldata, USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';

// The key and address a node's /wallet/generateaddress published as an example (see address.unit.test.ts).
const PRIVATE_KEY = hexToBytes('097c8ba8a310f39a41a667d35a20000cd21d58c7322484b584c4ada8ebd3ec06');
const OWNER = tronAddress('TLHx2Ta9WwtwDjgGxyeifHs5ipmJrJAbZ3');
const TX_ID = '8c621a0dc9bd4d405b20d0a43143955b9f546f98bbfde1aec295a65b0f925629';
const HALF_ORDER = secp256k1.Point.CURVE().n / 2n;

describe('signTransactionId (docs/tron.md §1.3)', () => {
  it('writes r ‖ s ‖ v, 65 bytes, v the recovery id 0 or 1, s low', () => {
    const signature = signTransactionId(TX_ID, PRIVATE_KEY);
    expect(signature).toHaveLength(65);
    expect([0, 1]).toContain(signature[64]);
    expect(bytesToNumberBE(signature.subarray(32, 64)) <= HALF_ORDER).toBe(true);
  });

  it('signs the txID itself, not sha256(txID) (the noble v2 prehash trap)', () => {
    const signature = signTransactionId(TX_ID, PRIVATE_KEY);
    const publicKey = secp256k1.getPublicKey(PRIVATE_KEY);
    expect(secp256k1.verify(signature.subarray(0, 64), hexToBytes(TX_ID), publicKey, { prehash: false })).toBe(true);
    const prehashed = secp256k1.sign(hexToBytes(TX_ID), PRIVATE_KEY);
    expect(bytesToHex(prehashed)).not.toBe(bytesToHex(signature.subarray(0, 64)));
  });

  it('is deterministic (RFC 6979): the same txID and key give the same bytes', () => {
    expect(bytesToHex(signTransactionId(TX_ID, PRIVATE_KEY))).toBe(bytesToHex(signTransactionId(TX_ID, PRIVATE_KEY)));
  });

  it('refuses a txID that is not 32 bytes of hex', () => {
    expect(() => signTransactionId(TX_ID.slice(2), PRIVATE_KEY)).toThrow(/64 hex/);
    expect(() => signTransactionId(`0x${TX_ID.slice(2)}`, PRIVATE_KEY)).toThrow(/64 hex/);
  });
});

describe('recoverSignerAddress (what the simulated chain checks against owner_address)', () => {
  const signature = signTransactionId(TX_ID, PRIVATE_KEY);

  it('recovers the owner from our v (0/1) and from tronweb’s v (27/28)', () => {
    expect(recoverSignerAddress(TX_ID, signature)).toBe(OWNER);
    const tronwebStyle = signature.slice();
    tronwebStyle[64] = (signature[64] ?? 0) + 27;
    expect(recoverSignerAddress(TX_ID, tronwebStyle)).toBe(OWNER);
  });

  it('recovers someone else for another txID: a signature does not move to another transaction', () => {
    const otherTxId = `${TX_ID.slice(0, 63)}${TX_ID.endsWith('0') ? '1' : '0'}`;
    expect(recoverSignerAddress(otherTxId, signature)).not.toBe(OWNER);
  });

  it('refuses v outside 0, 1, 27, 28 and lengths other than 65', () => {
    for (const v of [2, 3, 26, 29, 31, 35, 255]) {
      const odd = signature.slice();
      odd[64] = v;
      expect(recoverSignerAddress(TX_ID, odd)).toBeUndefined();
    }
    expect(recoverSignerAddress(TX_ID, signature.subarray(0, 64))).toBeUndefined();
    expect(recoverSignerAddress(TX_ID, Uint8Array.of(...signature, 0))).toBeUndefined();
  });

  it('refuses r = 0 without throwing', () => {
    const zero = new Uint8Array(65);
    expect(recoverSignerAddress(TX_ID, zero)).toBeUndefined();
  });

  it('agrees with noble’s recovery on 300 keys × 9 signatures: good, high-s, other v, tampered, r or s out of range, random bytes', () => {
    // The independent oracle: noble recovers (the curve library of the signer), libsecp256k1 is what recoverSignerAddress runs.
    const n = secp256k1.Point.CURVE().n;
    const nobleSigner = (txId: string, sig: Uint8Array): string | undefined => {
      const id = normalizedRecoveryId(sig[64] ?? -1);
      if (sig.length !== 65 || id === undefined) return undefined;
      try {
        return tronAddressFromPublicKey(
          secp256k1.recoverPublicKey(Uint8Array.of(id, ...sig.subarray(0, 64)), hexToBytes(txId), { prehash: false }),
        );
      } catch {
        return undefined;
      }
    };
    const withScalar = (sig: Uint8Array, offset: number, value: bigint): Uint8Array => {
      const copy = sig.slice();
      copy.set(numberToBytesBE(value, 32), offset);
      return copy;
    };
    let recovered = 0;
    for (let round = 0; round < 300; round++) {
      const key = secp256k1.utils.randomSecretKey();
      const txId = bytesToHex(randomBytes(32));
      const good = signTransactionId(txId, key);
      const s = bytesToNumberBE(good.subarray(32, 64));
      const variants = [
        good,
        // high s with the other recovery id: the same signer (the malleable twin)
        Uint8Array.of(...withScalar(good, 32, n - s).subarray(0, 64), (good[64] ?? 0) ^ 1),
        Uint8Array.of(...good.subarray(0, 64), (good[64] ?? 0) ^ 1),
        Uint8Array.of(...good.subarray(0, 64), (good[64] ?? 0) + 27),
        withScalar(good, 0, bytesToNumberBE(good.subarray(0, 32)) ^ 1n),
        withScalar(good, 0, n + BigInt(round)),
        withScalar(good, 32, 0n),
        withScalar(good, 32, n),
        Uint8Array.of(...randomBytes(64), round % 2),
      ];
      for (const signature of variants) {
        const ours = recoverSignerAddress(txId, signature);
        expect(ours).toBe(nobleSigner(txId, signature));
        if (ours !== undefined) recovered += 1;
      }
      expect(recoverSignerAddress(txId, good)).toBe(tronAddressFromPrivateKey(key));
    }
    // Most variants recover someone (the good ones always); the range checks refuse the rest alike.
    expect(recovered).toBeGreaterThan(1_200);
  });

  it('normalizes v the way java-tron does', () => {
    expect([0, 1, 27, 28, 2, 29].map(normalizedRecoveryId)).toEqual([0, 1, 0, 1, undefined, undefined]);
  });
});

describe('signTriggerSmartContract', () => {
  const fields = {
    refBlockBytes: hexToBytes('28c3'),
    refBlockHash: hexToBytes('ce6d340282788569'),
    expirationMs: 1777447227000,
    timestampMs: 1777447168009,
    feeLimitSun: 30_000_000n,
    ownerAddress: OWNER,
    contractAddress: USDT_CONTRACT_MAINNET,
    data: transferCalldata(tronAddress('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'), 12_345_678n),
  };

  it('gives broadcast bytes that decode to the same txID and recover the owner', () => {
    const signed = signTriggerSmartContract(fields, PRIVATE_KEY);
    const decoded = decodeSignedTransaction(signed.bytes);
    if (!decoded.ok) throw new Error(decoded.problem);
    expect(decoded.transaction.txId).toBe(signed.txId);
    expect(decoded.transaction.raw).toEqual({ ...fields, callValueSun: 0n });
    expect(recoverSignerAddress(signed.txId, decoded.transaction.signatures[0] ?? new Uint8Array())).toBe(OWNER);
  });

  it("refuses a key that is not the owner's", () => {
    const otherKey = new Uint8Array(32).fill(3);
    expect(() => signTriggerSmartContract(fields, otherKey)).toThrow(new RegExp(`not for the owner ${OWNER}`));
    expect(tronAddressFromPrivateKey(otherKey)).not.toBe(OWNER);
  });
});
