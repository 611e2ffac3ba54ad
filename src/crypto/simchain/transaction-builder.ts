// The node-side builders a wallet calls before it signs (java-tron Wallet.createTransactionCapsule):
// `/wallet/createtransaction` (TransferServlet: a TRX TransferContract, validated
// as TransferActuator.validate does, printed by Util.printCreateTransaction) and
// `/wallet/triggersmartcontract` (TriggerSmartContractServlet: an unsigned
// TriggerSmartContract in a TransactionExtention). Both reference the latest
// solidified block, expire 60 s after the head block's time and carry the node's
// clock as timestamp (Wallet.setTransaction with trx.reference.block = "solid").
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import {
  encodeTransferContractRaw,
  encodeTriggerSmartContractRaw,
  referenceBlockFields,
  transactionId,
} from '../tron/transaction.ts';
import { chainTransactionJson } from './chain-transaction.ts';
import { hexText } from './node-json.ts';
import { addressOf, type NodeRequestBody } from './node-request.ts';
import type { SimulatedChain } from './simulated-chain.ts';

/** java-tron Constant.TRANSACTION_DEFAULT_EXPIRATION_TIME. */
const DEFAULT_EXPIRATION_MS = 60_000;
export const VALIDATE_ERROR_CLASS = 'class org.tron.core.exception.ContractValidateException';
const INVALID_PARAMETER_CLASS = 'class java.security.InvalidParameterException';

/** TaPoS, expiration and timestamp of a transaction this node builds now. */
export function header(chain: SimulatedChain) {
  const reference = chain.solidBlock;
  return {
    ...referenceBlockFields(reference.number, reference.id),
    expirationMs: chain.head.timestampMs + DEFAULT_EXPIRATION_MS,
    timestampMs: chain.nowMs,
  };
}

/** `/wallet/createtransaction`: the unsigned TRX transfer, or `{Error}` as Util.processError writes it. */
export function createTransferTransaction(chain: SimulatedChain, body: NodeRequestBody): Record<string, unknown> {
  const owner = addressOf(body['owner_address']);
  const to = addressOf(body['to_address']);
  const amount = body['amount'];
  const refuse = (message: string) => ({ Error: `${VALIDATE_ERROR_CLASS} : ${message}` });
  if (!owner) return refuse('Invalid ownerAddress!');
  if (!to) return refuse('Invalid toAddress!');
  if (to === owner) return refuse('Cannot transfer TRX to yourself.');
  const ownerAccount = chain.state.account(owner);
  if (!ownerAccount) return refuse('Validate TransferContract error, no OwnerAccount.');
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0)
    return refuse('Amount must be greater than 0.');
  // A new recipient costs its activation on top (TransferActuator: fee + getCreateNewAccountFeeInSystemContract).
  const activationSun = chain.state.account(to) ? 0n : chain.parameters.createNewAccountFeeSun;
  if (ownerAccount.balanceSun < BigInt(amount) + activationSun)
    return refuse('Validate TransferContract error, balance is not sufficient.');
  const raw = { ...header(chain), ownerAddress: owner, toAddress: to, amountSun: BigInt(amount) };
  const rawBytes = encodeTransferContractRaw(raw);
  return chainTransactionJson({ kind: 'trx', rawBytes, raw, txId: transactionId(rawBytes), signatures: [] });
}

/**
 * `/wallet/triggersmartcontract` for a call that changes state: the unsigned
 * transaction with the fee_limit asked for. The contract must exist (Wallet.triggerContract);
 * nothing runs until a block includes it. View calls are answered by the caller as
 * triggerconstantcontract (Wallet.triggerContract → callConstantContract).
 */
export function triggerSmartContractTransaction(chain: SimulatedChain, body: NodeRequestBody): Record<string, unknown> {
  const otherError = (message: string) => ({
    result: { code: 'OTHER_ERROR', message: hexText(`${INVALID_PARAMETER_CLASS} : ${message}`) },
  });
  if (typeof body['owner_address'] !== 'string' || body['owner_address'] === '')
    return otherError("owner_address isn't set.");
  if (typeof body['contract_address'] !== 'string' || body['contract_address'] === '')
    return otherError("contract_address isn't set.");
  const owner = addressOf(body['owner_address']);
  const contract = addressOf(body['contract_address']);
  const data = callData(body);
  const feeLimit = body['fee_limit'] ?? 0;
  const callValue = body['call_value'] ?? 0;
  if (!owner || !contract || data === undefined || !isWhole(feeLimit) || !isWhole(callValue))
    return otherError('owner_address, contract_address, data, fee_limit or call_value is malformed');
  if (contract !== chain.parameters.usdtContract) {
    return {
      result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexText('No contract or not a valid smart contract') },
    };
  }
  const raw = {
    ...header(chain),
    ownerAddress: owner,
    contractAddress: contract,
    callValueSun: BigInt(callValue),
    feeLimitSun: BigInt(feeLimit),
    data,
  };
  const rawBytes = encodeTriggerSmartContractRaw(raw);
  const transaction = chainTransactionJson({
    rawBytes,
    raw,
    txId: transactionId(rawBytes),
    signatures: [],
  });
  return { result: { result: true }, transaction };
}

/** The call's data: `data` as given, or keccak256(function_selector)[0..4] ‖ parameter (Util.parseMethod). */
export function callData(body: NodeRequestBody): Uint8Array | undefined {
  const selector = body['function_selector'];
  const hex =
    typeof selector === 'string' && selector !== ''
      ? bytesToHex(keccak_256(utf8ToBytes(selector.replace(/\s+/g, ''))).subarray(0, 4)) +
        (typeof body['parameter'] === 'string' ? body['parameter'] : '')
      : typeof body['data'] === 'string'
        ? body['data']
        : '';
  return /^(?:[0-9a-fA-F]{2})*$/.test(hex) ? hexToBytes(hex) : undefined;
}

function isWhole(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
