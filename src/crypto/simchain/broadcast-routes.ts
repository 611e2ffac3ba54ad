// The two broadcast paths of the simulated node, with their answers as java-tron
// writes them. `/wallet/broadcasttransaction` (BroadcastServlet) prints the Return
// message: `{result: true, txid}`, or `{result: false, code, txid, message}` with the
// message in hex. `/wallet/broadcasthex` (BroadcastHexServlet) writes every field:
// `code` SUCCESS included, the message as text, and the transaction it read as a
// JSON string (tronweb's sendHexTransaction parses it).
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { TRANSACTION_MAX_BYTES } from '../tron/transaction.ts';
import { broadcastHexTransactionText, broadcastTransactionJson } from './broadcast-json.ts';
import { decodeChainTransaction } from './chain-transaction.ts';
import type { Route } from './node-api.ts';
import type { NodeFaults } from './node-faults.ts';
import { hexText } from './node-json.ts';
import type { BroadcastOutcome, SimulatedChain } from './simulated-chain.ts';

export function broadcastRoutes(chain: SimulatedChain, faults: NodeFaults): Record<string, Route> {
  const busy = () => ({ result: false, code: 'SERVER_BUSY', message: hexText('Server busy.') });
  const send = (hex: string) => chain.broadcastHex(hex, { neverInclude: faults.take('neverInclude') });

  const broadcastHex: Route = (body) => {
    if (faults.take('serverBusy')) return busy();
    const hex = body['transaction'];
    if (typeof hex !== 'string' || hex.length > 2 * TRANSACTION_MAX_BYTES + 2)
      return { result: false, code: 'OTHER_ERROR', message: hexText('transaction is missing') };
    const outcome = send(hex);
    const decoded = /^(?:[0-9a-fA-F]{2})+$/.test(hex) ? decodeChainTransaction(hexToBytes(hex)) : undefined;
    // A transaction the chain cannot read is refused as broadcasttransaction refuses it.
    if (!decoded?.ok) return returnJson(outcome);
    return {
      result: outcome.result,
      code: outcome.result ? 'SUCCESS' : outcome.code,
      message: outcome.result ? '' : outcome.message,
      transaction: broadcastHexTransactionText(decoded.transaction),
      txid: decoded.transaction.txId,
    };
  };
  const broadcastJson: Route = (body) => {
    if (faults.take('serverBusy')) return busy();
    const built = broadcastTransactionJson(body);
    if (!built.ok) return { result: false, code: 'OTHER_ERROR', message: hexText(built.problem) };
    return returnJson(send(bytesToHex(built.bytes)));
  };
  return { '/wallet/broadcasthex': broadcastHex, '/wallet/broadcasttransaction': broadcastJson };
}

/** GrpcAPI.Return as JsonFormat prints it (code SUCCESS is the zero value, left out), plus the txid. */
function returnJson(outcome: BroadcastOutcome): Record<string, unknown> {
  if (outcome.result) return { result: true, txid: outcome.txId };
  return {
    result: false,
    code: outcome.code,
    ...(outcome.txId ? { txid: outcome.txId } : {}),
    message: hexText(outcome.message),
  };
}
