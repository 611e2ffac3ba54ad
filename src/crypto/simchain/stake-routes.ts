// The Stake 2.0 paths of the simulated node. Builders (FreezeBalanceV2Servlet,
// UnFreezeBalanceV2Servlet, WithdrawExpireUnfreezeServlet, DelegateResourceServlet,
// UnDelegateResourceServlet → Wallet.createTransactionCapsule): the unsigned
// transaction once the actuator validates it against the head, else
// `{Error: "class org.tron.core.exception.ContractValidateException : …"}`.
// Reads (getcandelegatedmaxsize, getdelegatedresourcev2,
// getdelegatedresourceaccountindexv2, getcanwithdrawunfreezeamount,
// getavailableunfreezecount) on /wallet and /walletsolidity as java-tron serves
// them: /wallet from the head's state, /walletsolidity from the solidified
// block's (SimulatedChain.solidState), each at its block's time (docs/crypto.md).
import {
  encodeStakeTransactionRaw,
  stakeTransactionJson,
  type ResourceCode,
  type StakeContract,
} from '../tron/stake-contracts.ts';
import { transactionId } from '../tron/transaction.ts';
import { delegationKey, type ChainState } from './chain-state.ts';
import type { Route } from './node-api.ts';
import { addressOf, type NodeRequestBody } from './node-request.ts';
import type { SimulatedChain } from './simulated-chain.ts';
import { canDelegateMaxSun, NO_STAKE, stakeRefusal, UNFREEZE_MAX_TIMES, withdrawableSun } from './stake-execution.ts';
import { delegatedResourceListJson, delegationIndexJson } from './stake-json.ts';
import { header, VALIDATE_ERROR_CLASS } from './transaction-builder.ts';

const INVALID_PARAMETER_CLASS = 'class java.lang.IllegalArgumentException';

export function stakeRoutes(chain: SimulatedChain): Record<string, Route> {
  const build =
    (read: (body: NodeRequestBody) => StakeContract | string): Route =>
    (body) => {
      const contract = read(body);
      if (typeof contract === 'string') {
        // An unreadable address or resource is the actuator's refusal; an unreadable number, the JSON reader's.
        const validation = /^(?:Invalid |ResourceCode error)/.test(contract);
        return { Error: `${validation ? VALIDATE_ERROR_CLASS : INVALID_PARAMETER_CLASS} : ${contract}` };
      }
      const refusal = stakeRefusal(chain.state, chain.parameters, contract, chain.head.timestampMs);
      if (refusal !== null) return { Error: `${VALIDATE_ERROR_CLASS} : ${refusal}` };
      const raw = { ...header(chain), contract };
      const rawBytes = encodeStakeTransactionRaw(raw);
      return stakeTransactionJson({ rawBytes, raw, txId: transactionId(rawBytes), signatures: [] });
    };

  /** What a read sees: the head's state on /wallet; on /walletsolidity the solidified block's, at its time. */
  const readView = (solid: boolean): StakeReadView =>
    solid
      ? { state: chain.solidState(), nowMs: chain.solidBlock.timestampMs }
      : { state: chain.state, nowMs: chain.head.timestampMs };
  const routes: Record<string, Route> = {
    '/wallet/freezebalancev2': build(freezeContract),
    '/wallet/unfreezebalancev2': build(unfreezeContract),
    '/wallet/withdrawexpireunfreeze': build(withdrawContract),
    '/wallet/delegateresource': build(delegateContract),
    '/wallet/undelegateresource': build(undelegateContract),
  };
  for (const [prefix, solid] of [
    ['/wallet', false],
    ['/walletsolidity', true],
  ] as const) {
    const view = () => readView(solid);
    routes[`${prefix}/getcandelegatedmaxsize`] = (body) => canDelegatedMaxSize(chain, view(), body);
    routes[`${prefix}/getdelegatedresourcev2`] = (body) => delegatedResourceV2(view(), body);
    routes[`${prefix}/getdelegatedresourceaccountindexv2`] = (body) => delegationIndex(view(), body);
    routes[`${prefix}/getcanwithdrawunfreezeamount`] = (body) => canWithdrawUnfreezeAmount(view(), body);
    routes[`${prefix}/getavailableunfreezecount`] = (body) => availableUnfreezeCount(view(), body);
  }
  return routes;
}

/** The state a staking read answers from, and java-tron's "now" there (latestBlockHeaderTimestamp). */
interface StakeReadView {
  readonly state: ChainState;
  readonly nowMs: number;
}

function canDelegatedMaxSize(chain: SimulatedChain, view: StakeReadView, body: NodeRequestBody) {
  const owner = addressOf(body['owner_address']);
  const type = body['type'] ?? 0;
  const resource = type === 0 ? 'BANDWIDTH' : type === 1 ? 'ENERGY' : undefined;
  const maxSize = owner && resource ? canDelegateMaxSun(view.state, chain.parameters, owner, resource, view.nowMs) : 0n;
  return maxSize === 0n ? {} : { max_size: Number(maxSize) };
}

function delegatedResourceV2(view: StakeReadView, body: NodeRequestBody) {
  const from = addressOf(body['fromAddress']);
  const to = addressOf(body['toAddress']);
  if (!from || !to) return {};
  return delegatedResourceListJson([
    view.state.delegations.get(delegationKey(from, to, false)),
    view.state.delegations.get(delegationKey(from, to, true)),
  ]);
}

/** An address that is not 21 bytes gets the empty index (Wallet.getDelegatedResourceAccountIndexV2). */
function delegationIndex(view: StakeReadView, body: NodeRequestBody) {
  const address = addressOf(body['value']);
  return address ? delegationIndexJson(view.state, address) : {};
}

function canWithdrawUnfreezeAmount(view: StakeReadView, body: NodeRequestBody) {
  const owner = addressOf(body['owner_address']);
  const timestamp = body['timestamp'] ?? 0;
  if (!owner || typeof timestamp !== 'number' || timestamp < 0) return {};
  const account = view.state.account(owner);
  if (!account) return {};
  const amount = withdrawableSun(account.stake ?? NO_STAKE, timestamp === 0 ? view.nowMs : timestamp);
  return amount === 0n ? {} : { amount: Number(amount) };
}

function availableUnfreezeCount(view: StakeReadView, body: NodeRequestBody) {
  const owner = addressOf(body['owner_address']);
  const account = owner ? view.state.account(owner) : undefined;
  if (!account) return {};
  const waiting = (account.stake ?? NO_STAKE).unfrozen.filter((item) => item.expireTimeMs > view.nowMs);
  return { count: UNFREEZE_MAX_TIMES - waiting.length };
}
/** Whole non-negative numbers as JsonFormat.merge reads an int64 (a JSON number or decimal text). */
function int64(value: unknown, name: string): bigint | string {
  if (value === undefined) return 0n;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d{1,19}$/.test(value)) return BigInt(value);
  return `${name} is not an int64`;
}

function resourceOf(value: unknown): ResourceCode | { readonly problem: string } {
  if (value === undefined || value === 'BANDWIDTH' || value === 0) return 'BANDWIDTH';
  if (value === 'ENERGY' || value === 1) return 'ENERGY';
  if (value === 'TRON_POWER' || value === 2)
    return { problem: 'ResourceCode error, valid ResourceCode[BANDWIDTH、ENERGY]' };
  return { problem: `resource ${JSON.stringify(value).slice(0, 40)} is not a ResourceCode` };
}

function freezeContract(body: NodeRequestBody): StakeContract | string {
  const ownerAddress = addressOf(body['owner_address']);
  const frozenBalanceSun = int64(body['frozen_balance'], 'frozen_balance');
  const resource = resourceOf(body['resource']);
  if (typeof frozenBalanceSun === 'string') return frozenBalanceSun;
  if (typeof resource === 'object') return resource.problem;
  if (!ownerAddress) return 'Invalid address';
  return { type: 'FreezeBalanceV2Contract', ownerAddress, frozenBalanceSun, resource };
}

function unfreezeContract(body: NodeRequestBody): StakeContract | string {
  const ownerAddress = addressOf(body['owner_address']);
  const unfreezeBalanceSun = int64(body['unfreeze_balance'], 'unfreeze_balance');
  const resource = resourceOf(body['resource']);
  if (typeof unfreezeBalanceSun === 'string') return unfreezeBalanceSun;
  if (typeof resource === 'object') return resource.problem;
  if (!ownerAddress) return 'Invalid address';
  return { type: 'UnfreezeBalanceV2Contract', ownerAddress, unfreezeBalanceSun, resource };
}

function withdrawContract(body: NodeRequestBody): StakeContract | string {
  const ownerAddress = addressOf(body['owner_address']);
  if (!ownerAddress) return 'Invalid address';
  return { type: 'WithdrawExpireUnfreezeContract', ownerAddress };
}

function delegateContract(body: NodeRequestBody): StakeContract | string {
  const common = delegationFields(body);
  if (typeof common === 'string') return common;
  const lockPeriodBlocks = int64(body['lock_period'], 'lock_period');
  if (typeof lockPeriodBlocks === 'string') return lockPeriodBlocks;
  return { type: 'DelegateResourceContract', ...common, lock: body['lock'] === true, lockPeriodBlocks };
}

function undelegateContract(body: NodeRequestBody): StakeContract | string {
  const common = delegationFields(body);
  if (typeof common === 'string') return common;
  return { type: 'UnDelegateResourceContract', ...common };
}

function delegationFields(body: NodeRequestBody) {
  const ownerAddress = addressOf(body['owner_address']);
  const receiverAddress = addressOf(body['receiver_address']);
  const balanceSun = int64(body['balance'], 'balance');
  const resource = resourceOf(body['resource']);
  if (!ownerAddress) return 'Invalid address';
  if (!receiverAddress) return 'Invalid receiverAddress';
  if (typeof balanceSun === 'string') return balanceSun;
  if (typeof resource === 'object') return resource.problem;
  return { ownerAddress, receiverAddress, balanceSun, resource };
}
