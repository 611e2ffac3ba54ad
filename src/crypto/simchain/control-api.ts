// The simulator's own control surface, beside the node API on the same port:
// `POST /simulator/*` does what a test or a sandbox helper does to the chain
// (a payer's transfer, blocks, a reorg, the faucet, one-shot transfer
// outcomes, draining an account's TRX, the USDT contract's blacklist and its
// dynamic energy factor), and what keeps sandbox shops apart on the one chain
// (owners of transfers and of armed outcomes, the transactions a reorg would
// orphan, mining that stays behind the wall clock). It is what lets a gateway process
// drive a chain served by another process (`serve --role api` beside
// `--role worker`). No real node has these paths; node faults never touch
// them. Amounts are decimal strings of sun / micro-USDT (never JSON numbers).
import { parseTronAddress, type TronAddress } from '../tron/address.ts';
import { ENERGY_FACTOR_MAX } from './chain-parameters.ts';
import { NEXT_TRANSFER_OUTCOMES, type NextTransferOutcome } from './chain-state.ts';
import type { NodeAnswer } from './node-api.ts';
import type { SimulatedChain } from './simulated-chain.ts';

export const CONTROL_PATH_PREFIX = '/simulator/';

/** Bounds shared with the gateway's test-helper routes. */
const CONTROL_MINE_MAX = 1_000;

type Body = Record<string, unknown>;

class ControlRefusal extends Error {}

/** Declarations of owners per call: more than an executor pass broadcasts. */
const CONTROL_OWNERS_MAX = 1_000;
const OWNER_PATTERN = /^[A-Za-z0-9_:.-]{1,64}$/;

export interface ControlApiOptions {
  /** A chain that follows the wall clock: mined blocks are squeezed in before it (SimulatedChain.mine). */
  readonly wallNowMs?: () => number;
}

export function createControlApi(
  chain: SimulatedChain,
  options: ControlApiOptions = {},
): (path: string, body: Body) => NodeAnswer {
  const head = () => ({ head_block: chain.head.number, solidified_block: chain.solidNumber });
  const balances = (address: TronAddress) => {
    const account = chain.state.account(address);
    return {
      address,
      activated: account !== undefined,
      trx_sun: String(account?.balanceSun ?? 0n),
      usdt: String(chain.state.usdtBalance(address)),
    };
  };

  const routes: Record<string, (body: Body) => unknown> = {
    info: () => ({
      ...head(),
      usdt_contract: chain.parameters.usdtContract,
      now_ms: chain.nowMs,
      payers: chain.payers.map((payer) => payer.address),
    }),
    balances: (body) => balances(address(body['address'], 'address')),
    send_usdt: (body) => {
      const to = address(body['to'], 'to');
      const amount = whole(body['amount'], 'amount', { positive: true });
      const fromText = body['from'];
      let from: TronAddress | undefined;
      if (fromText !== undefined) {
        from = address(fromText, 'from');
        if (!chain.payers.some((payer) => payer.address === from)) {
          throw new ControlRefusal(
            `from must be one of the simulated chain's payer accounts: ${chain.payers.map((payer) => payer.address).join(', ')}`,
          );
        }
      }
      const owner = optionalOwner(body['owner']);
      const sent = chain.sendUsdt({
        to,
        amount,
        ...(from === undefined ? {} : { from }),
        ...(owner === undefined ? {} : { owner }),
      });
      return sent.result
        ? { result: true, txid: sent.txId }
        : { result: false, code: sent.code, message: sent.message };
    },
    mine: (body) => {
      const count = body['count'];
      if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1 || count > CONTROL_MINE_MAX) {
        throw new ControlRefusal(`count must be a whole number from 1 to ${CONTROL_MINE_MAX}`);
      }
      chain.mine(count, notAfter(body));
      return head();
    },
    reorg: (body) => {
      const depth = reorgDepth(body['depth']);
      const expected = body['head_id'];
      // A block produced since the caller looked at the newest blocks would be replaced unchecked.
      if (expected !== undefined && expected !== chain.head.id)
        throw new ControlRefusal('head_id is no longer the head: look at the newest blocks again');
      chain.reorg(depth, notAfter(body));
      return head();
    },
    newest_transactions: (body) => ({
      head_id: chain.head.id,
      transactions: chain.transactionsInNewest(reorgDepth(body['depth'])).map((parties) => ({
        tx_id: parties.txId,
        from: parties.from,
        to: parties.to ?? null,
        owner: parties.owner ?? null,
      })),
    }),
    declare_owners: (body) => {
      const owners = body['owners'];
      if (!Array.isArray(owners) || owners.length > CONTROL_OWNERS_MAX)
        throw new ControlRefusal(`owners must be a list of at most ${CONTROL_OWNERS_MAX} {tx_id, owner}`);
      const declared = owners.map((entry: unknown) => {
        const item = (entry !== null && typeof entry === 'object' ? entry : {}) as Body;
        const txId = item['tx_id'];
        if (typeof txId !== 'string' || !/^[0-9a-fA-F]{64}$/.test(txId))
          throw new ControlRefusal('tx_id must be 64 hex digits');
        const owner = optionalOwner(item['owner']);
        if (owner === undefined) throw new ControlRefusal('owner is required');
        return { txId, owner };
      });
      for (const { txId, owner } of declared) chain.declareOwner(txId, owner);
      return { declared: declared.length };
    },
    // A fresh address of the owner's own: what a sandbox shop may blacklist and fund.
    owned_address: (body) => {
      const owner = optionalOwner(body['owner']);
      if (owner === undefined) throw new ControlRefusal('owner is required');
      return { address: chain.makeOwnedAddress(owner), owner };
    },
    faucet: (body) => {
      const target = ownedBy(address(body['address'], 'address'), optionalOwner(body['owner']));
      const trxSun = body['trx_sun'] === undefined ? 0n : whole(body['trx_sun'], 'trx_sun');
      const usdt = body['usdt'] === undefined ? 0n : whole(body['usdt'], 'usdt');
      chain.faucet(target, { trxSun, usdt });
      return balances(target);
    },
    next_transfer: (body) => {
      const target = address(body['address'], 'address');
      const outcome = body['outcome'];
      if (outcome !== null && !NEXT_TRANSFER_OUTCOMES.includes(outcome as NextTransferOutcome)) {
        throw new ControlRefusal(`outcome must be one of ${NEXT_TRANSFER_OUTCOMES.join(', ')}, or null to disarm`);
      }
      const owner = optionalOwner(body['owner']);
      chain.armNextTransfer(target, outcome as NextTransferOutcome | null, owner);
      return { address: target, outcome, owner: owner ?? null };
    },
    // Tether's addBlackList / removeBlackList, as the issuer would call them.
    // With `owner`: only an address made for that owner (owned_address), so its listing reaches no one else.
    blacklist: (body) => {
      const target = ownedBy(address(body['address'], 'address'), optionalOwner(body['owner']));
      const listed = body['listed'];
      if (typeof listed !== 'boolean') throw new ControlRefusal('listed must be true or false');
      chain.setBlacklisted(target, listed);
      return { address: target, listed };
    },
    // The USDT contract's ContractState.energy_factor from now on (1/10,000), as a maintenance cycle moves it.
    energy_factor: (body) => {
      const factor = body['factor'];
      if (typeof factor !== 'number' || !Number.isSafeInteger(factor) || factor < 0 || factor > ENERGY_FACTOR_MAX) {
        throw new ControlRefusal(
          `factor must be a whole number from 0 to ${ENERGY_FACTOR_MAX} (1/10,000: 3400 = +34 % energy)`,
        );
      }
      chain.setUsdtEnergyFactor(factor);
      return { factor };
    },
    drain_trx: (body) => {
      const target = address(body['address'], 'address');
      return { address: target, drained_sun: String(chain.drainTrx(target)) };
    },
  };

  /** `target` itself when no owner is given (the operator's call) or when it was made for `owner`. */
  function ownedBy(target: TronAddress, owner: string | undefined): TronAddress {
    if (owner !== undefined && chain.ownerOfAddress(target) !== owner)
      throw new ControlRefusal(`address ${target} is not one made for ${owner} (owned_address)`);
    return target;
  }

  /** The time new blocks must not pass: the caller's `not_after_ms` and this chain's wall clock, whichever is earlier. */
  function notAfter(body: Body): { notAfterMs?: number } {
    const given = body['not_after_ms'];
    if (given !== undefined && (typeof given !== 'number' || !Number.isSafeInteger(given)))
      throw new ControlRefusal('not_after_ms must be a whole number of milliseconds since 1970');
    const ceilings = [given, options.wallNowMs?.()].filter((value) => value !== undefined);
    return ceilings.length === 0 ? {} : { notAfterMs: Math.min(...ceilings) };
  }

  function reorgDepth(depth: unknown): number {
    const limit = Math.min(chain.parameters.solidityDepth, chain.head.number);
    if (typeof depth !== 'number' || !Number.isSafeInteger(depth) || depth < 1 || depth > limit)
      throw new ControlRefusal(`depth must be a whole number from 1 to ${limit} (blocks above the solidified one)`);
    return depth;
  }

  return (path, body) => {
    const route = routes[path.slice(CONTROL_PATH_PREFIX.length)];
    if (!route) return { status: 404, json: { error: 'not_found', message: `no control path ${path}` } };
    try {
      return { status: 200, json: route(body) };
    } catch (error) {
      if (error instanceof ControlRefusal)
        return { status: 400, json: { error: 'invalid_request', message: error.message } };
      throw error;
    }
  };
}

/** Whose a transfer or an armed outcome is (a sandbox shop's id): absent, or 1-64 of letters, digits and _:.- */
function optionalOwner(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !OWNER_PATTERN.test(value))
    throw new ControlRefusal('owner must be 1 to 64 letters, digits or _:.-');
  return value;
}

function address(value: unknown, name: string): TronAddress {
  const parsed = parseTronAddress(typeof value === 'string' ? value : '');
  if (!parsed.ok) throw new ControlRefusal(`${name} ${parsed.problem}`);
  return parsed.address;
}

/** A whole number of sun or micro-USDT, as a decimal string. */
function whole(value: unknown, name: string, options: { readonly positive?: boolean } = {}): bigint {
  if (typeof value !== 'string' || !/^\d{1,30}$/.test(value))
    throw new ControlRefusal(`${name} must be a whole number as a decimal string`);
  const amount = BigInt(value);
  if (options.positive && amount === 0n) throw new ControlRefusal(`${name} must be above zero`);
  return amount;
}
