// What a block's transaction says under its owner's signature. A node prints
// every transaction of a block with its `raw_data_hex`, `txID` and `signature`
// (java-tron Util.printBlockToJSON → printTransactionToJSON); the txID is
// sha256 of those raw bytes and the signature is over the txID, so the raw
// bytes are what the owner signed and no node can change them unnoticed. A
// deposit stated there — a TriggerSmartContract on the USDT contract calling
// `transfer(to, amount)` or `transferFrom(from, to, amount)` — is the payer's
// own word; a Transfer log is only the node's account of running it.
import { hexToBytes } from '@noble/hashes/utils.js';
import { tronAddressToHex, type TronAddress } from './address.ts';
import { recoverSignerAddress } from './signing.ts';
import { decodeTriggerSmartContractRaw, transactionId } from './transaction.ts';
import { decodeTokenMoveCalldata } from './trc20-usdt.ts';

/** A USDT movement stated by signed calldata. */
interface SignedUsdtMove {
  readonly from: TronAddress;
  readonly to: TronAddress;
  readonly amount: bigint;
}

export type SignedCallReading =
  /** The node printed no raw_data_hex: nothing can be checked. */
  | { readonly kind: 'missing' }
  /** sha256(raw_data_hex) is not the txID: the node altered the transaction. */
  | { readonly kind: 'altered' }
  /** A USDT transfer or transferFrom signed by the owner. */
  | { readonly kind: 'usdt_move'; readonly move: SignedUsdtMove }
  /**
   * Anything else: another contract (a USDT transfer made inside it states no
   * amount we can read), another call, a raw layout we do not model (memo,
   * permission id), or no signature by the owner's own key (an account whose
   * permissions name other keys signs with those).
   */
  | { readonly kind: 'other' };

export interface PrintedTransaction {
  readonly txID: string;
  readonly raw_data_hex?: string | undefined;
  readonly signature?: readonly string[] | undefined;
}

export function readSignedCall(transaction: PrintedTransaction, usdtHex: string): SignedCallReading {
  if (transaction.raw_data_hex === undefined) return { kind: 'missing' };
  const rawBytes = hexToBytes(transaction.raw_data_hex);
  const txId = transactionId(rawBytes);
  if (txId !== transaction.txID.toLowerCase()) return { kind: 'altered' };
  const decoded = decodeTriggerSmartContractRaw(rawBytes);
  if (!decoded.ok || tronAddressToHex(decoded.raw.contractAddress) !== usdtHex || decoded.raw.callValueSun !== 0n)
    return { kind: 'other' };
  const call = decodeTokenMoveCalldata(decoded.raw.data);
  if (call === undefined) return { kind: 'other' };
  const owner = decoded.raw.ownerAddress;
  const signedByOwner = (transaction.signature ?? []).some(
    (signature) => recoverSignerAddress(txId, hexToBytes(signature)) === owner,
  );
  if (!signedByOwner) return { kind: 'other' };
  return {
    kind: 'usdt_move',
    move: { from: call.from === 'caller' ? owner : call.from, to: call.to, amount: call.amount },
  };
}
