// Handing a signed transaction to the network and reading what the node said
// (docs/tron.md §1.4, §1.8). Sending the same signed bytes twice is harmless (the
// second answer is DUP_TRANSACTION_ERROR), so every retryable failure — a
// node down, slow, busy, or short of peers — is tried on the next node. The
// caller gets one of four answers and never an exception for node trouble:
//   accepted   a node took it into its pool (not yet on chain: watch the txId)
//   duplicate  a node already had it (in its pool or on chain): watch the txId
//   rejected   a node refused it for good; signing the same bytes again cannot help
//   unknown    no definite answer: it may or may not have reached a pool; watch
//              the txId until its expiration before building a new one
import { decodeNodeText } from './node-answers.ts';
import {
  TronNodeRequestError,
  TronNodeUnavailableError,
  invalidAnswer,
  NodeAttemptFailure,
  type NodeFailure,
} from './node-errors.ts';
import type { NodeTransport } from './node-transport.ts';

export interface SignedTransaction {
  /** sha256 of the raw bytes, 64 hex digits. */
  readonly txId: string;
  /** The protobuf `Transaction` (raw and signature), in hex. */
  readonly hex: string;
}

type BroadcastRejectionCode =
  | 'SIGERROR'
  | 'CONTRACT_VALIDATE_ERROR'
  | 'CONTRACT_EXE_ERROR'
  | 'BANDWITH_ERROR'
  | 'TAPOS_ERROR'
  | 'TOO_BIG_TRANSACTION_ERROR'
  | 'TRANSACTION_EXPIRATION_ERROR'
  | 'OTHER_ERROR'
  /** The node refused the HTTP request itself (HTTP 4xx or an `Error` answer). */
  | 'REQUEST_REFUSED';

export type BroadcastResult =
  | { readonly kind: 'accepted'; readonly txId: string }
  | { readonly kind: 'duplicate'; readonly txId: string }
  | {
      readonly kind: 'rejected';
      readonly txId: string;
      readonly code: BroadcastRejectionCode;
      readonly message: string;
    }
  | {
      readonly kind: 'unknown';
      readonly txId: string;
      readonly detail: string;
      readonly failures: readonly NodeFailure[];
    };

/** The node could not take it now; another node, or the same one later, may. */
const BUSY_CODES = new Set(['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION', 'BLOCK_UNSOLIDIFIED']);
const REJECTION_CODES = new Set<string>([
  'SIGERROR',
  'CONTRACT_VALIDATE_ERROR',
  'CONTRACT_EXE_ERROR',
  'BANDWITH_ERROR',
  'TAPOS_ERROR',
  'TOO_BIG_TRANSACTION_ERROR',
  'TRANSACTION_EXPIRATION_ERROR',
  'OTHER_ERROR',
]);
/** java-tron refuses transactions above 500 KiB; twice that in hex, and a bit. */
const MAX_TRANSACTION_HEX_LENGTH = 1_100_000;
const PATH = '/wallet/broadcasthex';

export async function broadcastHex(transport: NodeTransport, transaction: SignedTransaction): Promise<BroadcastResult> {
  const txId = transaction.txId.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(txId)) throw new Error('broadcast: txId must be 64 hex digits');
  if (
    transaction.hex.length === 0 ||
    transaction.hex.length > MAX_TRANSACTION_HEX_LENGTH ||
    !/^(?:[0-9a-fA-F]{2})+$/.test(transaction.hex)
  ) {
    throw new Error('broadcast: the transaction must be non-empty hex of at most 550,000 bytes');
  }
  try {
    return await transport.run(PATH, async (node) =>
      readBroadcastAnswer(await node.post(PATH, { transaction: transaction.hex }), txId),
    );
  } catch (error) {
    if (error instanceof TronNodeRequestError)
      return { kind: 'rejected', txId, code: 'REQUEST_REFUSED', message: error.message };
    if (error instanceof TronNodeUnavailableError)
      return { kind: 'unknown', txId, detail: error.message, failures: error.failures };
    throw error;
  }
}

/** One node's answer: `{result, code?, message?, txid?}`; busy codes are retryable failures. */
function readBroadcastAnswer(answer: unknown, txId: string): BroadcastResult {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
    throw invalidAnswer('broadcast answer is not an object');
  const { result, code, message, txid } = answer as {
    result?: unknown;
    code?: unknown;
    message?: unknown;
    txid?: unknown;
  };
  if (txid !== undefined && (typeof txid !== 'string' || txid.toLowerCase() !== txId)) {
    // The node hashed other bytes than ours: do not believe anything it says about them.
    throw invalidAnswer(`broadcast answered for transaction ${String(txid).slice(0, 80)}, not ${txId}`);
  }
  const text = typeof message === 'string' ? decodeNodeText(message) : '';
  if (result === true) return { kind: 'accepted', txId };
  if (code === 'DUP_TRANSACTION_ERROR') return { kind: 'duplicate', txId };
  if (typeof code === 'string' && BUSY_CODES.has(code)) throw new NodeAttemptFailure('busy', `${code} ${text}`.trim());
  if (typeof code === 'string' && REJECTION_CODES.has(code))
    return { kind: 'rejected', txId, code: code as BroadcastRejectionCode, message: text };
  if (result === false) {
    const named = typeof code === 'string' ? `${code.slice(0, 64)}: ` : '';
    return { kind: 'rejected', txId, code: 'OTHER_ERROR', message: `${named}${text}` };
  }
  throw invalidAnswer('broadcast answer has no result');
}
