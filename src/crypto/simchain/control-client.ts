// A client of the simulator's control surface (control-api.ts), so a gateway
// process drives the sandbox chain the same way whether the chain runs in
// this process or in another one (the worker role serves it). Sandbox only.
import { tronAddress, type TronAddress } from '../tron/address.ts';
import type { NextTransferOutcome } from './chain-state.ts';
import { CONTROL_PATH_PREFIX } from './control-api.ts';

interface SimulatorInfo {
  readonly headBlock: number;
  readonly solidifiedBlock: number;
  readonly usdtContract: TronAddress;
  readonly payers: readonly TronAddress[];
}

interface SimulatorBalances {
  readonly activated: boolean;
  readonly trxSun: bigint;
  readonly usdt: bigint;
}

export interface NewestTransaction {
  readonly txId: string;
  readonly from: TronAddress;
  readonly to: TronAddress | null;
  readonly owner: string | null;
}

type SimulatorSend =
  | { readonly result: true; readonly txId: string }
  | { readonly result: false; readonly code: string; readonly message: string };

export interface SimulatorControl {
  readonly url: string;
  info(): Promise<SimulatorInfo>;
  balances(address: TronAddress): Promise<SimulatorBalances>;
  /** A payer (the first unless `from` names another) signs and broadcasts a USDT transfer. */
  sendUsdt(request: {
    readonly to: TronAddress;
    readonly amount: bigint;
    readonly from?: TronAddress | undefined;
    /** Whose transfer it is: outcomes armed for that owner apply to it. */
    readonly owner?: string | undefined;
  }): Promise<SimulatorSend>;
  /** `notAfterMs`: squeeze the blocks in before this time (the wall clock) instead of 3 s apart. */
  mine(count: number, notAfterMs?: number): Promise<{ readonly headBlock: number; readonly solidifiedBlock: number }>;
  /** `headId`: refused (SimulatorRefusal) when the head is no longer this block; `notAfterMs` as for mine. */
  reorg(
    depth: number,
    options?: { readonly headId?: string; readonly notAfterMs?: number },
  ): Promise<{ readonly headBlock: number; readonly solidifiedBlock: number }>;
  /** The transactions a reorg of `depth` would orphan, and the head they were read at. */
  newestTransactions(depth: number): Promise<{ readonly headId: string; readonly transactions: NewestTransaction[] }>;
  /** Declares whose each transaction is, before it is broadcast. */
  declareOwners(owners: readonly { readonly txId: string; readonly owner: string }[]): Promise<void>;
  /** A fresh address made for `owner`: only calls naming that owner may blacklist or fund it. */
  makeOwnedAddress(owner: string): Promise<TronAddress>;
  /** With `owner`: refused (SimulatorRefusal) unless the address was made for that owner. */
  faucet(
    address: TronAddress,
    amounts: { readonly trxSun?: bigint; readonly usdt?: bigint },
    owner?: string,
  ): Promise<SimulatorBalances>;
  /** The next USDT transfer to `address` (of `owner` only, when given) ends so, once; `null` disarms. */
  armNextTransfer(address: TronAddress, outcome: NextTransferOutcome | null, owner?: string): Promise<void>;
  /** Every sun of the account's TRX is gone; returns how much it was. */
  drainTrx(address: TronAddress): Promise<bigint>;
  /** Puts the address on (or takes it off) the USDT contract's blacklist; with `owner`, as for faucet. */
  setBlacklisted(address: TronAddress, listed: boolean, owner?: string): Promise<void>;
  /** The USDT contract's dynamic energy factor from now on, in 1/10,000. */
  setEnergyFactor(factor: number): Promise<void>;
}

/** The control surface said no (a bad value): the message says why. */
export class SimulatorRefusal extends Error {
  override readonly name = 'SimulatorRefusal';
}

/** The chain did not answer (not running, or another process on that port). */
export class SimulatorUnreachable extends Error {
  override readonly name = 'SimulatorUnreachable';
}

const DEFAULT_TIMEOUT_MS = 10_000;

export function createSimulatorControl(url: string, options: { readonly timeoutMs?: number } = {}): SimulatorControl {
  const base = url.replace(/\/+$/, '');
  const call = async (path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    let response: Response;
    try {
      response = await fetch(`${base}${CONTROL_PATH_PREFIX}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (error) {
      throw new SimulatorUnreachable(`the simulated chain at ${base} did not answer: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const answer =
      json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
    if (response.status === 400 && typeof answer?.['message'] === 'string')
      throw new SimulatorRefusal(answer['message']);
    if (response.status !== 200 || !answer)
      throw new SimulatorUnreachable(
        `${base} is not a simulated chain's control surface (HTTP ${response.status} on ${path})`,
      );
    return answer;
  };
  const blocks = (answer: Record<string, unknown>) => ({
    headBlock: Number(answer['head_block']),
    solidifiedBlock: Number(answer['solidified_block']),
  });
  const balances = (answer: Record<string, unknown>): SimulatorBalances => ({
    activated: answer['activated'] === true,
    trxSun: BigInt(String(answer['trx_sun'])),
    usdt: BigInt(String(answer['usdt'])),
  });

  return {
    url: base,
    async info() {
      const answer = await call('info', {});
      return {
        ...blocks(answer),
        usdtContract: answer['usdt_contract'] as TronAddress,
        payers: answer['payers'] as TronAddress[],
      };
    },
    balances: async (address) => balances(await call('balances', { address })),
    async sendUsdt(request) {
      const answer = await call('send_usdt', {
        to: request.to,
        amount: String(request.amount),
        ...(request.from === undefined ? {} : { from: request.from }),
        ...(request.owner === undefined ? {} : { owner: request.owner }),
      });
      return answer['result'] === true
        ? { result: true, txId: String(answer['txid']) }
        : { result: false, code: String(answer['code']), message: String(answer['message']) };
    },
    mine: async (count, notAfterMs) =>
      blocks(await call('mine', { count, ...(notAfterMs === undefined ? {} : { not_after_ms: notAfterMs }) })),
    reorg: async (depth, options = {}) =>
      blocks(
        await call('reorg', {
          depth,
          ...(options.headId === undefined ? {} : { head_id: options.headId }),
          ...(options.notAfterMs === undefined ? {} : { not_after_ms: options.notAfterMs }),
        }),
      ),
    async newestTransactions(depth) {
      const answer = await call('newest_transactions', { depth });
      const listed = answer['transactions'] as Record<string, unknown>[];
      return {
        headId: String(answer['head_id']),
        transactions: listed.map((item) => ({
          txId: String(item['tx_id']),
          from: item['from'] as TronAddress,
          to: (item['to'] ?? null) as TronAddress | null,
          owner: (item['owner'] ?? null) as string | null,
        })),
      };
    },
    async declareOwners(owners) {
      await call('declare_owners', { owners: owners.map((item) => ({ tx_id: item.txId, owner: item.owner })) });
    },
    makeOwnedAddress: async (owner) => tronAddress(String((await call('owned_address', { owner }))['address'])),
    faucet: async (address, amounts, owner) =>
      balances(
        await call('faucet', {
          address,
          trx_sun: String(amounts.trxSun ?? 0n),
          usdt: String(amounts.usdt ?? 0n),
          ...(owner === undefined ? {} : { owner }),
        }),
      ),
    async armNextTransfer(address, outcome, owner) {
      await call('next_transfer', { address, outcome, ...(owner === undefined ? {} : { owner }) });
    },
    drainTrx: async (address) => BigInt(String((await call('drain_trx', { address }))['drained_sun'])),
    async setBlacklisted(address, listed, owner) {
      await call('blacklist', { address, listed, ...(owner === undefined ? {} : { owner }) });
    },
    async setEnergyFactor(factor) {
      await call('energy_factor', { factor });
    },
  };
}
