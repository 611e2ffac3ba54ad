// The full-node HTTP API of the simulated chain: one function per path, each
// answering what java-tron answers (docs/tron.md §1.8), empty answers included:
// `{}` for an unknown block, account or transaction (GetBlockByNumServlet,
// GetTransactionInfoByIdServlet); for gettransactioninfobyblocknum `{}` only
// when num ≤ 0 and `[]` for any other block it has no results for — an empty
// block, a block not produced (or not solidified) yet, a block whose body was
// pruned (GetTransactionInfoByBlockNumServlet; Wallet.getTransactionInfoByBlockNum
// catches ItemNotFoundException and answers the empty list). `/walletsolidity/*`
// sees only solidified blocks, and answers balances as of the solidified block.
// Faults (node-faults.ts) bend the answers the way real nodes misbehave.
// Broadcasts live in broadcast-routes.ts, the builders a wallet calls before it
// signs in transaction-builder.ts; docs/crypto.md lists the paths tronweb uses.
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { TronAddress } from '../tron/address.ts';
import {
  addressFromWord,
  BALANCE_OF_SELECTOR,
  decodeTransferCalldata,
  IS_BLACKLISTED_SELECTOR,
  TRANSFER_SELECTOR,
  uint256Word,
} from '../tron/trc20-usdt.ts';
import { broadcastRoutes } from './broadcast-routes.ts';
import type { NodeFaults, RateLimitSettings } from './node-faults.ts';
import { callData, createTransferTransaction, triggerSmartContractTransaction } from './transaction-builder.ts';
import { usdtSmartContractJson } from './usdt-contract-json.ts';
import { accountNetJson, accountResourceJson, accountStakeJson } from './stake-json.ts';
import { stakeRoutes } from './stake-routes.ts';
import { NO_STAKE } from './stake-execution.ts';
import type { JournalEntry, StakeState } from './chain-state.ts';
import {
  accountJson,
  nodeInfoJson,
  blockJson,
  blockTransactionJson,
  chainParametersJson,
  constantCallTransactionJson,
  contractInfoJson,
  hexText,
  transactionInfoJson,
  witnessHex,
} from './node-json.ts';
import { addressOf, toNumber } from './node-request.ts';
import type { SimulatedBlock, SimulatedChain } from './simulated-chain.ts';
import { penaltyPart, revertReason, transferEnergy } from './usdt-execution.ts';

export interface NodeAnswer {
  readonly status: number;
  /** JSON (bigints written as JSON integers), or text. */
  readonly json?: unknown;
  readonly text?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

type Body = Record<string, unknown>;
export type Route = (body: Body) => unknown;

const CONSTANT_CALL_ENERGY = 500;

export function createNodeApi(chain: SimulatedChain, faults: NodeFaults): (path: string, body: Body) => NodeAnswer {
  const witness = witnessHex(chain.seed);

  /** The head as this node shows it (a stuck node shows an older one). */
  // The path being answered: a lag may apply to some paths only.
  let answering = '';
  const visibleHead = (): SimulatedBlock => {
    const { stuckHeadAt } = faults.settings;
    let number = chain.head.number;
    if (stuckHeadAt !== undefined) number = Math.min(stuckHeadAt, number);
    number = Math.max(0, number - faults.lagFor(answering));
    return chain.block(number) ?? chain.head;
  };
  /** Whether this node answers with the transactions' results (history on, and not hiding them). */
  const servesResults = () => !faults.settings.historyOff && !faults.settings.hideTransactions;
  const shownBlock = (block: SimulatedBlock, options: { readonly detail?: boolean } = {}) => {
    const json = blockJson(block, witness, options);
    if (faults.settings.hideTransactions) delete json['transactions'];
    return json;
  };
  const visibleSolidNumber = () => Math.max(0, visibleHead().number - chain.parameters.solidityDepth);
  const blockUpTo = (number: unknown, limit: number) => {
    const wanted = toNumber(number);
    return wanted !== undefined && wanted <= limit ? chain.block(wanted) : undefined;
  };
  const logOptions = () =>
    faults.settings.foreignLogContract ? { logContract: faults.settings.foreignLogContract } : {};

  const nowBlock =
    (solid: boolean): Route =>
    () => {
      if (faults.settings.emptyNowBlock) return {};
      return shownBlock(solid ? chain.block(visibleSolidNumber())! : visibleHead());
    };
  const blockByNum =
    (solid: boolean): Route =>
    (body) => {
      const block = blockUpTo(body['num'], solid ? visibleSolidNumber() : visibleHead().number);
      return block ? shownBlock(block) : {};
    };
  const infosByBlockNum =
    (solid: boolean): Route =>
    (body) => {
      const number = toNumber(body['num']);
      if (number === undefined || number <= 0) return {};
      const block = blockUpTo(number, solid ? visibleSolidNumber() : visibleHead().number);
      if (!block || !servesResults()) return [];
      return block.transactions.map((included) => transactionInfoJson(included, block, logOptions()));
    };
  const located = (body: Body, solid: boolean) => {
    const txId = typeof body['value'] === 'string' ? body['value'].toLowerCase() : '';
    const found = chain.findTransaction(txId);
    const limit = solid ? visibleSolidNumber() : visibleHead().number;
    return found && found.block.number <= limit ? found : undefined;
  };
  const infoById =
    (solid: boolean): Route =>
    (body) => {
      const found = servesResults() ? located(body, solid) : undefined;
      return found ? transactionInfoJson(found.transaction, found.block, logOptions()) : {};
    };
  const transactionById =
    (solid: boolean): Route =>
    (body) => {
      const found = faults.settings.hideTransactions ? undefined : located(body, solid);
      return found ? blockTransactionJson(found.transaction) : {};
    };

  const getBlock =
    (solid: boolean): Route =>
    (body) => {
      const limit = solid ? visibleSolidNumber() : visibleHead().number;
      const idOrNum = body['id_or_num'];
      const detail = body['detail'] === true;
      if (idOrNum === undefined || idOrNum === '') return shownBlock(chain.block(limit) ?? visibleHead(), { detail });
      const text = String(idOrNum);
      const block = /^[0-9a-fA-F]{64}$/.test(text) ? chain.blockById(text) : blockUpTo(text, limit);
      return block && block.number <= limit ? shownBlock(block, { detail }) : {};
    };
  // GetBlockByIdServlet: `{}` for an id the node does not have (or, on walletsolidity, has not solidified).
  const blockById =
    (solid: boolean): Route =>
    (body) => {
      const id = typeof body['value'] === 'string' && /^[0-9a-fA-F]{64}$/.test(body['value']) ? body['value'] : '';
      const block = id ? chain.blockById(id) : undefined;
      return block && block.number <= (solid ? visibleSolidNumber() : visibleHead().number) ? shownBlock(block) : {};
    };

  const account =
    (solid: boolean): Route =>
    (body) => {
      const address = addressOf(body['address']);
      const state = address ? chain.state.account(address) : undefined;
      if (!address || !state) return {};
      const bandwidthUsed = chain.state.freeBandwidthUsed(state, chain.nowMs);
      if (!solid) {
        const stake = accountStakeJson(chain.parameters, state.stake ?? NO_STAKE, chain.head.timestampMs);
        return accountJson(address, state, bandwidthUsed, stake);
      }
      const above = changesAboveSolidified(chain, address);
      // An account the unsolidified blocks created does not exist yet at the solidified block.
      if (above.created) return {};
      const solidStake = above.stakeChanged ? above.stakeBefore : state.stake;
      const stake = accountStakeJson(chain.parameters, solidStake ?? NO_STAKE, chain.solidBlock.timestampMs);
      return accountJson(address, { ...state, balanceSun: state.balanceSun - above.trxSun }, bandwidthUsed, stake);
    };
  // Wallet.getAccountResource / getAccountNet: null (printed `{}`) for an account that does not exist.
  const accountResource: Route = (body) => {
    const address = addressOf(body['address']);
    const state = address ? chain.state.account(address) : undefined;
    if (!address || !state) return {};
    const bandwidthUsed = chain.state.freeBandwidthUsed(state, chain.nowMs);
    return accountResourceJson(
      chain.parameters,
      chain.state,
      state.stake ?? NO_STAKE,
      bandwidthUsed,
      chain.head.timestampMs,
    );
  };
  const accountNet: Route = (body) => {
    const address = addressOf(body['address']);
    const state = address ? chain.state.account(address) : undefined;
    if (!address || !state) return {};
    const bandwidthUsed = chain.state.freeBandwidthUsed(state, chain.nowMs);
    return accountNetJson(
      chain.parameters,
      chain.state,
      state.stake ?? NO_STAKE,
      bandwidthUsed,
      chain.head.timestampMs,
    );
  };

  const constantCall =
    (estimate: boolean, solid = false): Route =>
    (body) => {
      const contract = addressOf(body['contract_address']);
      const owner = addressOf(body['owner_address']);
      if (contract !== chain.parameters.usdtContract) {
        return {
          result: { code: 'CONTRACT_VALIDATE_ERROR', message: hexText('No contract or not a valid smart contract') },
        };
      }
      const selector =
        typeof body['function_selector'] === 'string' ? body['function_selector'].replace(/\s+/g, '') : undefined;
      const parameter = typeof body['parameter'] === 'string' ? body['parameter'] : '';
      const data = typeof body['data'] === 'string' ? body['data'] : undefined;
      const usdtBalanceOf = solid
        ? (holder: TronAddress) => chain.state.usdtBalance(holder) - changesAboveSolidified(chain, holder).usdt
        : (holder: TronAddress) => chain.state.usdtBalance(holder);
      const outcome = runView(chain, selector, parameter, data, owner, usdtBalanceOf);
      const seed = JSON.stringify([selector ?? data ?? '', parameter, owner ?? '', chain.head.id]);
      if (outcome.kind === 'revert') {
        return {
          result: { code: 'CONTRACT_EXE_ERROR', message: hexText('REVERT opcode executed') },
          energy_used: CONSTANT_CALL_ENERGY,
          constant_result: [''],
          transaction: constantCallTransactionJson(seed, 'FAILED'),
        };
      }
      if (estimate) return { result: { result: true }, energy_required: outcome.energy };
      // TransactionExtention: energy_used includes the dynamic energy penalty, energy_penalty (field 8) is that part.
      const penalty = outcome.penalty ?? 0;
      return {
        result: { result: true },
        energy_used: outcome.energy,
        constant_result: [outcome.word],
        ...(penalty > 0 ? { energy_penalty: penalty } : {}),
        transaction: constantCallTransactionJson(seed, 'ok'),
      };
    };

  // GetContractInfoServlet: `{}` for an address with no contract (Wallet.getContractInfo returns null).
  const contractInfo: Route = (body) => {
    const contract = addressOf(body['value']);
    return contract === chain.parameters.usdtContract ? contractInfoJson(contract, chain.state.usdtEnergyFactor) : {};
  };

  // GetContractServlet: `{}` for an address with no contract.
  const contract: Route = (body) => {
    const address = addressOf(body['value']);
    return address === chain.parameters.usdtContract ? usdtSmartContractJson(address) : {};
  };
  // Wallet.triggerContract: a view function runs as a constant call; anything else is built, unsigned.
  const triggerSmartContract: Route = (body) => {
    const data = callData(body);
    const view = data !== undefined && VIEW_SELECTORS.has(bytesToHex(data.subarray(0, 4)));
    return view ? constantCall(false)(body) : triggerSmartContractTransaction(chain, body);
  };
  const nodeInfo: Route = () => nodeInfoJson(visibleHead(), chain.block(visibleSolidNumber()) ?? chain.solidBlock);
  // The price history as "<since ms>:<price>": one price since genesis.
  const energyPrices: Route = () => ({ prices: `0:${chain.parameters.energyPriceSun}` });
  const bandwidthPrices: Route = () => ({ prices: `0:${chain.parameters.bandwidthPriceSun}` });

  const routes: Record<string, Route> = {
    '/wallet/getnowblock': nowBlock(false),
    '/walletsolidity/getnowblock': nowBlock(true),
    '/wallet/getblockbynum': blockByNum(false),
    '/walletsolidity/getblockbynum': blockByNum(true),
    '/wallet/getblock': getBlock(false),
    '/walletsolidity/getblock': getBlock(true),
    '/wallet/getblockbyid': blockById(false),
    '/walletsolidity/getblockbyid': blockById(true),
    '/wallet/gettransactioninfobyblocknum': infosByBlockNum(false),
    '/walletsolidity/gettransactioninfobyblocknum': infosByBlockNum(true),
    '/wallet/gettransactioninfobyid': infoById(false),
    '/walletsolidity/gettransactioninfobyid': infoById(true),
    '/wallet/gettransactionbyid': transactionById(false),
    '/walletsolidity/gettransactionbyid': transactionById(true),
    '/wallet/triggerconstantcontract': constantCall(false),
    // java-tron: TriggerConstantContractOnSolidityServlet, GetAccountOnSolidityServlet (HttpApiOnSolidityService) run the
    // /wallet/ servlets on the solidified state (WalletOnSolidity.futureGet).
    '/walletsolidity/triggerconstantcontract': constantCall(false, true),
    '/wallet/estimateenergy': constantCall(true),
    '/walletsolidity/estimateenergy': constantCall(true, true),
    '/wallet/triggersmartcontract': triggerSmartContract,
    '/wallet/createtransaction': (body) => createTransferTransaction(chain, body),
    '/wallet/getcontractinfo': contractInfo,
    '/wallet/getcontract': contract,
    '/wallet/getaccount': account(false),
    '/walletsolidity/getaccount': account(true),
    // java-tron serves these two on /wallet/ only (HttpApiOnSolidityService has neither).
    '/wallet/getaccountresource': accountResource,
    '/wallet/getaccountnet': accountNet,
    ...stakeRoutes(chain),
    '/wallet/getnodeinfo': nodeInfo,
    '/walletsolidity/getnodeinfo': nodeInfo,
    ...broadcastRoutes(chain, faults),
    '/wallet/getchainparameters': () => chainParametersJson(chain.parameters),
    '/wallet/getenergyprices': energyPrices,
    '/walletsolidity/getenergyprices': energyPrices,
    '/wallet/getbandwidthprices': bandwidthPrices,
    '/walletsolidity/getbandwidthprices': bandwidthPrices,
  };

  return (path, body) => {
    const limited = faults.takeRateLimited();
    if (limited) return rateLimitedAnswer(limited);
    if (faults.take('http503')) return { status: 503, text: 'Service Unavailable' };
    const route = routes[path];
    if (!route) return { status: 404, text: 'Not Found' };
    answering = path;
    return { status: 200, json: route(body) };
  };
}

/** A refused request, as the node of `limit.answer` words it (node-faults.ts RateLimitAnswer). */
function rateLimitedAnswer(limit: RateLimitSettings): NodeAnswer {
  const suspendSeconds = limit.suspendSeconds ?? 0;
  switch (limit.answer ?? 'http429') {
    case 'http429':
      return {
        status: 429,
        text: 'Too Many Requests',
        headers: { 'retry-after': String(Math.max(1, suspendSeconds)) },
      };
    case 'trongrid':
      return {
        status: 403,
        json: {
          Error: `The key exceeds the frequency limit(${limit.requestsPerSecond}), and the query server is suspended for ${suspendSeconds}s`,
        },
      };
    case 'java-tron':
      return { status: 200, json: { Error: 'class java.lang.IllegalAccessException : lack of computing resources' } };
  }
}

type ViewOutcome =
  | { readonly kind: 'ok'; readonly word: string; readonly energy: number; readonly penalty?: number }
  | { readonly kind: 'revert' };

/** The USDT contract's view functions, and a dry run of transfer (its energy). */
function runView(
  chain: SimulatedChain,
  selector: string | undefined,
  parameter: string,
  data: string | undefined,
  owner: TronAddress | undefined,
  usdtBalanceOf: (holder: TronAddress) => bigint,
): ViewOutcome {
  const word = (value: bigint) => bytesToHex(uint256Word(value));
  const name = selector ?? selectorName(data);
  const argumentsHex = selector !== undefined ? parameter : (data ?? '').slice(8);
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(argumentsHex)) return { kind: 'revert' };
  const args = hexToBytes(argumentsHex);
  switch (name) {
    case 'balanceOf(address)': {
      const holder = args.length === 32 ? addressFromWord(args) : undefined;
      return holder
        ? { kind: 'ok', word: word(usdtBalanceOf(holder)), energy: CONSTANT_CALL_ENERGY }
        : { kind: 'revert' };
    }
    case 'decimals()':
      return { kind: 'ok', word: word(BigInt(chain.parameters.usdtDecimals)), energy: CONSTANT_CALL_ENERGY };
    // TetherToken's `mapping (address => bool) public isBlackListed`: 1 for a listed address, else 0.
    case 'isBlackListed(address)': {
      const holder = args.length === 32 ? addressFromWord(args) : undefined;
      return holder
        ? { kind: 'ok', word: word(chain.state.usdtBlacklist.has(holder) ? 1n : 0n), energy: CONSTANT_CALL_ENERGY }
        : { kind: 'revert' };
    }
    case 'transfer(address,uint256)': {
      const call = decodeTransferCalldata(Uint8Array.from([...TRANSFER_SELECTOR, ...args]));
      if (!call.ok || !owner || revertReason(chain.state, owner, call.to, call.amount) !== null)
        return { kind: 'revert' };
      const energy = transferEnergy(chain.state, chain.parameters, call.to);
      return { kind: 'ok', word: word(1n), energy, penalty: penaltyPart(energy, chain.state.usdtEnergyFactor) };
    }
    default:
      return { kind: 'revert' };
  }
}

/** Each sealed block's journal by address, made on the first read of it (a journal never changes once its block is sealed). */
const journalsByAddress = new WeakMap<readonly JournalEntry[], ReadonlyMap<string, readonly JournalEntry[]>>();

/**
 * The entries of a block's journal for one address. Blocks above the solidified one hold every
 * transfer of the last ~19 blocks (thousands of entries while payouts land); custody reads one
 * address's balance at a time, so scanning the whole journals per read cost O(entries) each.
 */
function journalEntriesOf(journal: readonly JournalEntry[], address: TronAddress): readonly JournalEntry[] {
  let byAddress = journalsByAddress.get(journal);
  if (!byAddress) {
    const entries = new Map<string, JournalEntry[]>();
    for (const entry of journal) {
      if (!('address' in entry)) continue;
      const list = entries.get(entry.address);
      if (list) list.push(entry);
      else entries.set(entry.address, [entry]);
    }
    journalsByAddress.set(journal, entries);
    byAddress = entries;
  }
  return byAddress.get(address) ?? [];
}

/**
 * What the blocks above the solidified one changed for an address (their journals:
 * a solidified block's is dropped, a newer one's is kept for reorgs). Head state less
 * these is the state at the solidified block; faucet grants, made outside blocks,
 * count as solidified at once. A dry run of `transfer` and bandwidth still answer
 * from the head, and a stuck node (faults) shows the chain's solidified balances:
 * journals below the chain's solidified block are not kept.
 */
function changesAboveSolidified(
  chain: SimulatedChain,
  address: TronAddress,
): {
  usdt: bigint;
  trxSun: bigint;
  created: boolean;
  /** Whether those blocks changed its Stake 2.0 fields; `stakeBefore` is then what they were before the first change. */
  stakeChanged: boolean;
  stakeBefore: StakeState | undefined;
} {
  const changes = {
    usdt: 0n,
    trxSun: 0n,
    created: false,
    stakeChanged: false,
    stakeBefore: undefined as StakeState | undefined,
  };
  for (let number = chain.solidNumber + 1; number <= chain.head.number; number += 1) {
    for (const entry of journalEntriesOf(chain.block(number)?.journal ?? [], address)) {
      if (entry.kind === 'usdt') changes.usdt += entry.delta;
      else if (entry.kind === 'trx') changes.trxSun += entry.delta;
      else if (entry.kind === 'account') changes.created = true;
      else if (entry.kind === 'stake' && !changes.stakeChanged) {
        changes.stakeChanged = true;
        changes.stakeBefore = entry.before;
      }
    }
  }
  return changes;
}

const KNOWN_SELECTORS: Record<string, string> = {
  [bytesToHex(BALANCE_OF_SELECTOR)]: 'balanceOf(address)',
  '313ce567': 'decimals()',
  [bytesToHex(IS_BLACKLISTED_SELECTOR)]: 'isBlackListed(address)',
  [bytesToHex(TRANSFER_SELECTOR)]: 'transfer(address,uint256)',
};

/** The selectors of the contract's view functions (the ABI's `View` entries, usdt-contract-json.ts). */
const VIEW_SELECTORS = new Set(
  Object.entries(KNOWN_SELECTORS)
    .filter(([, name]) => name !== 'transfer(address,uint256)')
    .map(([selector]) => selector),
);

function selectorName(data: string | undefined): string | undefined {
  return data === undefined ? undefined : KNOWN_SELECTORS[data.slice(0, 8).toLowerCase()];
}
