// `/wallet/getcontract` of the simulated USDT contract: the SmartContract
// message as java-tron's GetContractServlet prints it (JsonFormat, `visible:
// false`: hex addresses, proto3 zero and false fields left out, ABI enums by
// name). The ABI lists only what the simulated contract answers (node-api.ts
// runView and usdt-execution.ts): the real TetherToken's other functions would
// revert here, so a wallet must not be offered them. No bytecode: the simulator
// runs no TVM (as getcontractinfo, node-json.ts).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { tronAddressToHex, type TronAddress } from '../tron/address.ts';

type AbiParameter = { readonly name: string; readonly type: string; readonly indexed?: true };

/** SmartContract.ABI.Entry: fields in protobuf order (constant 2, name 3, inputs 4, outputs 5, type 6, stateMutability 8). */
function view(name: string, inputs: AbiParameter[], output: string): Record<string, unknown> {
  return {
    constant: true,
    name,
    inputs,
    outputs: [{ name: '', type: output }],
    type: 'Function',
    stateMutability: 'View',
  };
}

const USDT_ABI_ENTRIES: readonly Record<string, unknown>[] = [
  view('balanceOf', [{ name: 'who', type: 'address' }], 'uint256'),
  view('decimals', [], 'uint8'),
  view('isBlackListed', [{ name: '', type: 'address' }], 'bool'),
  {
    name: 'transfer',
    inputs: [
      { name: '_to', type: 'address' },
      { name: '_value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
    type: 'Function',
    stateMutability: 'Nonpayable',
  },
  {
    name: 'Transfer',
    inputs: [
      { indexed: true, name: 'from', type: 'address' },
      { indexed: true, name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
    type: 'Event',
  },
];

/** The simulated contract's deployer (origin_address): derived from its address, the same in every answer. */
export function usdtDeployerHex(contract: TronAddress): string {
  return `41${bytesToHex(sha256(utf8ToBytes(`deployer\0${contract}`))).slice(0, 40)}`;
}

export function usdtSmartContractJson(contract: TronAddress): Record<string, unknown> {
  return {
    origin_address: usdtDeployerHex(contract),
    contract_address: tronAddressToHex(contract),
    abi: { entrys: USDT_ABI_ENTRIES },
    consume_user_resource_percent: 100,
    name: 'TetherToken',
    origin_energy_limit: 10_000_000,
  };
}
