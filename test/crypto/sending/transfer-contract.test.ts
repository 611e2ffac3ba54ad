// The TransferContract (TRX) encoder the executor signs gas top-ups with,
// checked against tronweb 6 as an independent oracle (tronweb builds the
// protobuf with google-protobuf classes generated from Tron.proto): for random
// keys, recipients, amounts, reference blocks and times, the raw bytes, txID
// and signature are the same.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { utils as tronwebUtils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { tronAddressFromEvm, tronAddressFromPrivateKey, tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { recoverSignerAddress, signTransferContract } from '../../../src/crypto/tron/signing.ts';
import { encodeTransferContractRaw, referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';

const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((bytes) => secp256k1.utils.isValidSecretKey(bytes));
const account = fc.uint8Array({ minLength: 20, maxLength: 20 }).map(tronAddressFromEvm);
// tronweb reads the JSON amount as a JS number: the oracle is exact up to 2^53 − 1 sun (9 billion TRX, above any top-up).
const MAX_ORACLE_SUN = BigInt(Number.MAX_SAFE_INTEGER);
const amountSun = fc.oneof(
  fc.constantFrom(1n, 1_000_000n, 14_000_000n, MAX_ORACLE_SUN),
  fc.bigInt({ min: 1n, max: MAX_ORACLE_SUN }),
);
const referenceBlock = fc.record({
  number: fc.integer({ min: 0, max: 2 ** 40 }),
  hashTail: fc.uint8Array({ minLength: 24, maxLength: 24 }),
});
const times = fc.record({
  timestampMs: fc.integer({ min: 1_500_000_000_000, max: 4_000_000_000_000 }),
  lifetimeMs: fc.integer({ min: 1, max: 86_400_000 }),
});

describe('the TransferContract encoder agrees with tronweb 6 (500 random TRX transfers)', () => {
  it('raw bytes, txID and signature are identical', () => {
    fc.assert(
      fc.property(privateKey, account, amountSun, referenceBlock, times, (key, recipient, amount, block, time) => {
        const owner = tronAddressFromPrivateKey(key);
        const blockId = `${block.number.toString(16).padStart(16, '0')}${bytesToHex(block.hashTail)}`;
        const reference = referenceBlockFields(block.number, blockId);
        const signed = signTransferContract(
          {
            ...reference,
            expirationMs: time.timestampMs + time.lifetimeMs,
            timestampMs: time.timestampMs,
            ownerAddress: owner,
            toAddress: recipient,
            amountSun: amount,
          },
          key,
        );
        const json = {
          visible: false,
          txID: signed.txId,
          raw_data: {
            contract: [
              {
                parameter: {
                  value: {
                    owner_address: tronAddressToHex(owner),
                    to_address: tronAddressToHex(recipient),
                    amount: amount.toString(),
                  },
                  type_url: 'type.googleapis.com/protocol.TransferContract',
                },
                type: 'TransferContract',
              },
            ],
            ref_block_bytes: bytesToHex(reference.refBlockBytes),
            ref_block_hash: bytesToHex(reference.refBlockHash),
            expiration: time.timestampMs + time.lifetimeMs,
            timestamp: time.timestampMs,
          },
        };
        const pb = tronwebUtils.transaction.txJsonToPb(json);
        expect(tronwebUtils.transaction.txPbToRawDataHex(pb).toLowerCase()).toBe(bytesToHex(signed.rawBytes));
        expect(tronwebUtils.transaction.txPbToTxID(pb).replace(/^0x/, '')).toBe(signed.txId);
        const tronwebSignature = tronwebUtils.crypto.signTransaction(bytesToHex(key), { txID: signed.txId })
          .signature[0] as string;
        expect(tronwebSignature.slice(0, 128).toLowerCase()).toBe(bytesToHex(signed.signatures[0]!).slice(0, 128));
        expect(recoverSignerAddress(signed.txId, signed.signatures[0]!)).toBe(owner);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a zero amount, and a key that is not the owner', () => {
    const key = secp256k1.utils.randomSecretKey();
    const owner = tronAddressFromPrivateKey(key);
    const other = tronAddressFromPrivateKey(secp256k1.utils.randomSecretKey());
    const base = {
      refBlockBytes: new Uint8Array(2),
      refBlockHash: new Uint8Array(8),
      expirationMs: 2_000_000_000_000,
      timestampMs: 1_999_999_940_000,
      toAddress: other,
      amountSun: 1n,
    };
    expect(() => encodeTransferContractRaw({ ...base, ownerAddress: owner, amountSun: 0n })).toThrow(RangeError);
    expect(() => signTransferContract({ ...base, ownerAddress: other }, key)).toThrow(/not for the owner/);
  });
});
