// `/wallet/broadcasttransaction`: the node re-serializes the JSON `raw_data`
// and ignores `raw_data_hex` (docs/tron.md §1.3), so a client whose JSON does not
// encode to the bytes it signed gets SIGERROR, exactly as on a real node.
import { hexToBytes } from '@noble/hashes/utils.js';
import { parseTronAddress, parseTronHexAddress, type TronAddress } from '../tron/address.ts';
import {
  encodeSignedTransaction,
  encodeTriggerSmartContractRaw,
  SIGNATURES_MAX,
  TRIGGER_SMART_CONTRACT_TYPE_URL,
} from '../tron/transaction.ts';

export type BuiltTransaction =
  { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly problem: string };

export function broadcastTransactionJson(body: Record<string, unknown>): BuiltTransaction {
  try {
    const visible = body['visible'] === true;
    const rawData = object(body['raw_data'], 'raw_data');
    const contracts = rawData['contract'];
    if (!Array.isArray(contracts) || contracts.length !== 1)
      return { ok: false, problem: 'raw_data.contract must hold one contract' };
    const contract = object(contracts[0], 'contract');
    if (contract['type'] !== 'TriggerSmartContract')
      return { ok: false, problem: 'only TriggerSmartContract is supported' };
    const parameter = object(contract['parameter'], 'parameter');
    if (parameter['type_url'] !== undefined && parameter['type_url'] !== TRIGGER_SMART_CONTRACT_TYPE_URL)
      return { ok: false, problem: 'type_url' };
    const value = object(parameter['value'], 'parameter.value');
    const signatures = body['signature'];
    if (!Array.isArray(signatures) || signatures.length === 0 || signatures.length > SIGNATURES_MAX)
      return { ok: false, problem: 'signature must be a list of 1..5' };
    const rawBytes = encodeTriggerSmartContractRaw({
      refBlockBytes: hex(rawData['ref_block_bytes'], 'ref_block_bytes'),
      refBlockHash: hex(rawData['ref_block_hash'], 'ref_block_hash'),
      expirationMs: integer(rawData['expiration'], 'expiration'),
      timestampMs: rawData['timestamp'] === undefined ? 0 : integer(rawData['timestamp'], 'timestamp'),
      feeLimitSun: BigInt(rawData['fee_limit'] === undefined ? 0 : integer(rawData['fee_limit'], 'fee_limit')),
      ownerAddress: address(value['owner_address'], visible),
      contractAddress: address(value['contract_address'], visible),
      callValueSun: BigInt(value['call_value'] === undefined ? 0 : integer(value['call_value'], 'call_value')),
      data: value['data'] === undefined ? new Uint8Array() : hex(value['data'], 'data'),
    });
    return {
      ok: true,
      bytes: encodeSignedTransaction(
        rawBytes,
        signatures.map((signature) => hex(signature, 'signature')),
      ),
    };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}

function object(value: unknown, name: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${name} must be an object`);
  return value as Record<string, unknown>;
}

function hex(value: unknown, name: string): Uint8Array {
  if (typeof value !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(value)) throw new Error(`${name} must be hex`);
  return hexToBytes(value);
}

function integer(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a whole number`);
  return value;
}

function address(value: unknown, visible: boolean): TronAddress {
  if (typeof value !== 'string') throw new Error('an address is missing');
  const parsed = visible ? parseTronAddress(value) : parseTronHexAddress(value);
  if (!parsed.ok) throw new Error(`address ${parsed.problem}`);
  return parsed.address;
}
