// tronweb (devDependency only) as an independent oracle: for random keys,
// amounts, recipients and reference blocks, our address, calldata, raw bytes,
// txID and signature equal what tronweb's offline functions make from the same
// transaction. tronweb builds the protobuf with google-protobuf classes
// generated from Tron.proto and signs with ethereum-cryptography: none of our code.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { TronWeb, utils as tronwebUtils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { tronAddressFromEvm, tronAddressFromPrivateKey, tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { signTriggerSmartContract } from '../../../src/crypto/tron/signing.ts';
import {
  decodeTriggerSmartContractRaw,
  referenceBlockFields,
  transactionJson,
} from '../../../src/crypto/tron/transaction.ts';
import { transferCalldata, USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';

const RUNS = 1000;
const UINT256_MAX = (1n << 256n) - 1n;

const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((bytes) => secp256k1.utils.isValidSecretKey(bytes));
const account = fc.uint8Array({ minLength: 20, maxLength: 20 }).map(tronAddressFromEvm);
const amount = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 15n }), // micro-USDT: up to a billion USDT
  fc.constantFrom(0n, 1n, 999_999n, 1_000_000n, UINT256_MAX),
  fc.bigInt({ min: 0n, max: UINT256_MAX }),
);
const referenceBlock = fc.record({
  number: fc.integer({ min: 0, max: 2 ** 40 }),
  hashTail: fc.uint8Array({ minLength: 24, maxLength: 24 }),
});
const times = fc.record({
  timestampMs: fc.integer({ min: 1_500_000_000_000, max: 4_000_000_000_000 }),
  lifetimeMs: fc.integer({ min: 1, max: 86_400_000 }),
});
// 0 (omitted by both), small, and up to the 15,000 TRX cap.
const feeLimitSun = fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 15_000_000_000n }));
const contract = fc.oneof(fc.constant(USDT_CONTRACT_MAINNET), account);

describe('our TRON encoder and signer agree with tronweb 6 (1,000 random transfers)', () => {
  it('address, calldata, raw bytes, txID and signature are identical (v differs by the documented +27)', () => {
    fc.assert(
      fc.property(
        privateKey,
        account,
        amount,
        referenceBlock,
        times,
        feeLimitSun,
        contract,
        (key, recipient, value, block, time, feeLimit, token) => {
          const keyHex = bytesToHex(key);
          const owner = tronAddressFromPrivateKey(key);
          expect(owner).toBe(TronWeb.address.fromPrivateKey(keyHex));

          const data = transferCalldata(recipient, value);
          const tronwebData = tronwebUtils.abi
            .encodeParams(['address', 'uint256'], [tronAddressToHex(recipient), value])
            .replace(/^0x/, '');
          expect(bytesToHex(data)).toBe(`a9059cbb${tronwebData}`);

          const blockId = `${block.number.toString(16).padStart(16, '0')}${bytesToHex(block.hashTail)}`;
          const signed = signTriggerSmartContract(
            {
              ...referenceBlockFields(block.number, blockId),
              expirationMs: time.timestampMs + time.lifetimeMs,
              timestampMs: time.timestampMs,
              feeLimitSun: feeLimit,
              ownerAddress: owner,
              contractAddress: token,
              data,
            },
            key,
          );

          // tronweb rebuilds the protobuf from the node-shaped JSON (as its txCheck does).
          const json = transactionJson(signed);
          const pb = tronwebUtils.transaction.txJsonToPb(json);
          expect(tronwebUtils.transaction.txPbToRawDataHex(pb).toLowerCase()).toBe(bytesToHex(signed.rawBytes));
          expect(tronwebUtils.transaction.txPbToTxID(pb).replace(/^0x/, '')).toBe(signed.txId);
          // And our decoder reads tronweb's bytes back to the same fields.
          expect(decodeTriggerSmartContractRaw(pb.getRawData().serializeBinary())).toEqual({
            ok: true,
            raw: signed.raw,
          });

          const tronwebSignature = tronwebUtils.crypto.signTransaction(keyHex, { txID: signed.txId })
            .signature[0] as string;
          const ours = bytesToHex(signed.signatures[0] ?? new Uint8Array());
          expect(tronwebSignature.slice(0, 128).toLowerCase()).toBe(ours.slice(0, 128));
          expect(Number.parseInt(tronwebSignature.slice(128), 16)).toBe(Number.parseInt(ours.slice(128), 16) + 27);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
