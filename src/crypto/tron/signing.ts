// Signing a TRON transaction and recovering who signed it (docs/tron.md §1.3).
// The signature is secp256k1 ECDSA over the 32-byte txID itself (no further
// hash), 65 bytes r ‖ s ‖ v. About v: java-tron and wallet-cli write the
// recovery id (0 or 1); tronweb writes recovery id + 27 (27 or 28). A node
// accepts both, because it adds 27 to a v below 27 before recovering
// (TransactionCapsule.getBase64FromByteString). We write 0/1 like the
// reference node and read either.
//
// Signing is noble's (the chosen foundation). Recovery — what a node does to
// every transaction it takes in, so the simulated chain's dearest step — is
// libsecp256k1's (tiny-secp256k1, the Bitcoin Core library compiled to WASM):
// 7× noble's recovery on this machine (3,551/s against 515/s), and an
// implementation independent of the signer, so every test that recovers what
// we signed checks one library against the other (docs/crypto.md "Signatures").
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { recover as libsecp256k1Recover } from 'tiny-secp256k1';
import { hexToBytes } from '@noble/hashes/utils.js';
import { tronAddressFromPrivateKey, tronAddressFromPublicKey, type TronAddress } from './address.ts';
import {
  encodeSignedTransaction,
  encodeTransferContractRaw,
  encodeTriggerSmartContractRaw,
  transactionId,
  type SignedTransaction,
  type TransferContractRaw,
  type TriggerSmartContractRaw,
} from './transaction.ts';

const SIGNATURE_BYTES = 65;
/** What tronweb adds to the recovery id; java-tron adds it too before recovering when v < 27. */
const TRONWEB_V_OFFSET = 27;

/**
 * r ‖ s ‖ v over a txID (64 hex digits), v = recovery id 0 or 1, s low
 * (noble's default, like wallet-cli's normalization).
 */
export function signTransactionId(txIdHex: string, privateKey: Uint8Array): Uint8Array {
  // noble v2 would sha256 the message first unless told not to: the node would then answer SIGERROR.
  const recovered = secp256k1.sign(txIdBytes(txIdHex), privateKey, { prehash: false, format: 'recovered' });
  // noble's 'recovered' layout is recovery id first; TRON wants it last.
  const signature = new Uint8Array(SIGNATURE_BYTES);
  signature.set(recovered.subarray(1), 0);
  signature[64] = recovered[0] ?? 0;
  return signature;
}

/**
 * The address whose key made `signature` over `txIdHex`, or undefined when the
 * signature is not 65 bytes, its v is not 0, 1, 27 or 28, or nothing recovers.
 */
export function recoverSignerAddress(txIdHex: string, signature: Uint8Array): TronAddress | undefined {
  if (signature.length !== SIGNATURE_BYTES) return undefined;
  const recoveryId = normalizedRecoveryId(signature[64] ?? -1);
  if (recoveryId === undefined) return undefined;
  try {
    // Throws on r or s of 0 or ≥ n; null when no point recovers (r not an x on the curve).
    const publicKey = libsecp256k1Recover(txIdBytes(txIdHex), signature.subarray(0, 64), recoveryId, false);
    return publicKey ? tronAddressFromPublicKey(publicKey) : undefined;
  } catch {
    return undefined;
  }
}

/** v as java-tron reads it: 27/28 as written by tronweb, 0/1 as written by java-tron and us. */
export function normalizedRecoveryId(v: number): 0 | 1 | undefined {
  const id = v >= TRONWEB_V_OFFSET ? v - TRONWEB_V_OFFSET : v;
  return id === 0 || id === 1 ? id : undefined;
}

/**
 * Encodes, identifies and signs one TriggerSmartContract transaction, refusing
 * a key that is not the owner's (the node would refuse the signature anyway).
 * `bytes` is the body of `/wallet/broadcasthex`.
 */
export function signTriggerSmartContract(
  fields: TriggerSmartContractRaw,
  privateKey: Uint8Array,
): SignedTransaction & { readonly bytes: Uint8Array } {
  const raw = { ...fields, callValueSun: fields.callValueSun ?? 0n };
  const signer = tronAddressFromPrivateKey(privateKey);
  if (signer !== raw.ownerAddress)
    throw new Error(`the key signs for ${signer}, not for the owner ${raw.ownerAddress}`);
  const rawBytes = encodeTriggerSmartContractRaw(raw);
  const txId = transactionId(rawBytes);
  const signatures = [signTransactionId(txId, privateKey)];
  return { rawBytes, raw, txId, signatures, bytes: encodeSignedTransaction(rawBytes, signatures) };
}

/** Encodes, identifies and signs one TransferContract (TRX) transaction, refusing a key that is not the owner's. */
export function signTransferContract(
  raw: TransferContractRaw,
  privateKey: Uint8Array,
): {
  readonly rawBytes: Uint8Array;
  readonly raw: TransferContractRaw;
  readonly txId: string;
  readonly signatures: readonly Uint8Array[];
  readonly bytes: Uint8Array;
} {
  const signer = tronAddressFromPrivateKey(privateKey);
  if (signer !== raw.ownerAddress)
    throw new Error(`the key signs for ${signer}, not for the owner ${raw.ownerAddress}`);
  const rawBytes = encodeTransferContractRaw(raw);
  const txId = transactionId(rawBytes);
  const signatures = [signTransactionId(txId, privateKey)];
  return { rawBytes, raw, txId, signatures, bytes: encodeSignedTransaction(rawBytes, signatures) };
}

function txIdBytes(txIdHex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(txIdHex)) throw new RangeError('a txID is 32 bytes (64 hex digits)');
  return hexToBytes(txIdHex);
}
