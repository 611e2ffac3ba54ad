// The energy of a USDT transfer, from the chain (docs/tron.md §1.5). It depends on
// two things only: whether the recipient already holds USDT (its balance slot
// is rewritten, or created) and the contract's dynamic energy factor, which
// java-tron moves once per maintenance cycle (ContractStateCapsule.catchUpToCycle,
// every 6 h, by at most the committee's increase factor). So a figure is asked
// of the node once per (recipient class, factor) — a constant call of the
// transfer itself (`triggerconstantcontract` → energy_used, penalty included) —
// and the factor once a minute (`getcontractinfo`): quotes and the executor
// stay off the node for every transfer after the first of its kind. Each chain
// access carries one (crypto-chain.ts), which quotes and the executor share.
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../clock.ts';
import { tronAddressFromEvm, type TronAddress } from '../tron/address.ts';
import type { TronNodeClient } from '../tron/node-client.ts';

/** How long the contract's energy factor is taken as read (it moves at most once per 6 h cycle). */
export const ENERGY_FACTOR_CACHE_MS = 60_000;
/** fee_limit = energy × price × (1 + this / 100): a cap above the estimate (docs/tron.md §1.5 "Suggested policy"). */
const FEE_LIMIT_MARGIN_PERCENT = 20n;
/** PAYGATE_TRON_TRANSFER_ENERGY_MAX's default: about 1.5× a transfer to a new holder on mainnet today. */
export const TRANSFER_ENERGY_MAX_DEFAULT = 200_000n;
/** The least fee_limit signed (docs/tron.md §1.5): a cap, never a charge. */
export const FEE_LIMIT_FLOOR_SUN = 15_000_000n;
/**
 * The mainnet measurements of docs/tron.md §1.5, used only while no constant call can
 * run the transfer (the sending address holds no USDT yet, so the contract
 * reverts it): a quote before the hot wallet is first funded. The executor never
 * signs on them: it has the sender's USDT by then, and asks.
 */
export const MEASURED_ENERGY_HOLDER = 64_285n;
export const MEASURED_ENERGY_NEW_HOLDER = 130_285n;
/** java-tron Constant.DYNAMIC_ENERGY_FACTOR_DECIMAL: energy_factor is in 1/10,000. */
const ENERGY_FACTOR_DECIMAL = 10_000n;
/** Figures kept per node: (class, factor) pairs, a handful in practice. */
const FIGURES_MAX = 64;

type TransferNode = Pick<TronNodeClient, 'getUsdtEnergyFactor' | 'dryRunUsdtTransfer'>;

/** A transfer whose energy is above the configured ceiling: it is not quoted, nor signed, until the chain's figure falls. */
export class TransferEnergyAboveCeilingError extends Error {
  override readonly name = 'TransferEnergyAboveCeilingError';
  readonly energy: bigint;
  readonly ceiling: bigint;
  constructor(energy: bigint, ceiling: bigint) {
    super(
      `a USDT transfer needs ${energy} energy on chain now, above the ceiling of ${ceiling} (PAYGATE_TRON_TRANSFER_ENERGY_MAX)`,
    );
    this.energy = energy;
    this.ceiling = ceiling;
  }
}

export interface UsdtTransferEnergy {
  /** The USDT contract's energy factor (1/10,000), read at most once per ENERGY_FACTOR_CACHE_MS of `clock`. */
  energyFactor(clock: Clock): Promise<number>;
  /**
   * Energy of a transfer from `from` to a recipient of that class, at the
   * factor now: asked of the node once per class and factor. `to` is the
   * recipient, or any address of the class (a fresh one for the dear case).
   */
  energyOf(
    clock: Clock,
    transfer: { readonly from: TronAddress; readonly to: TronAddress; readonly recipientHoldsUsdt: boolean },
  ): Promise<bigint>;
}

interface EnergyCache {
  factor?: { readonly value: Promise<number>; readonly atMs: number };
  /** `${holds}:${factor}` → energy the chain answered. */
  readonly figures: LRUCache<string, bigint>;
  /** Figures being asked: concurrent callers of one class and factor share one constant call. */
  readonly asking: Map<string, Promise<bigint>>;
  /** The last figure per class, with its factor: what scales when the chain cannot run the transfer. */
  readonly lastByClass: Map<boolean, { readonly energy: bigint; readonly factor: number }>;
}

/** The transfer energies of one node client, with their cache. */
export function createUsdtTransferEnergy(node: TransferNode): UsdtTransferEnergy {
  const own: EnergyCache = { figures: new LRUCache({ max: FIGURES_MAX }), asking: new Map(), lastByClass: new Map() };

  const measure = async (
    transfer: { readonly from: TronAddress; readonly to: TronAddress; readonly recipientHoldsUsdt: boolean },
    factor: number,
    key: string,
  ): Promise<bigint> => {
    // 1 micro-USDT: the energy does not depend on the amount (the same two storage slots are written).
    const dry = await node.dryRunUsdtTransfer(transfer.from, transfer.to, 1n);
    if (!dry.ok) return scaledFigure(own, transfer.recipientHoldsUsdt, factor);
    const energy = BigInt(dry.energy);
    own.figures.set(key, energy);
    own.lastByClass.set(transfer.recipientHoldsUsdt, { energy, factor });
    return energy;
  };

  const energyFactor = (clock: Clock): Promise<number> => {
    const nowMs = clock.now().getTime();
    if (!own.factor || nowMs - own.factor.atMs >= ENERGY_FACTOR_CACHE_MS || nowMs < own.factor.atMs) {
      const value = node.getUsdtEnergyFactor();
      own.factor = { value, atMs: nowMs };
      // A failed read is not kept: the next caller asks again.
      value.catch(() => {
        if (own.factor?.value === value) own.factor = undefined;
      });
    }
    return own.factor.value;
  };

  return {
    energyFactor,
    async energyOf(clock, transfer) {
      const factor = await energyFactor(clock);
      const key = `${transfer.recipientHoldsUsdt}:${factor}`;
      const known = own.figures.get(key);
      if (known !== undefined) return known;
      let asking = own.asking.get(key);
      if (!asking) {
        asking = measure(transfer, factor, key).finally(() => own.asking.delete(key));
        own.asking.set(key, asking);
      }
      return asking;
    },
  };
}

/**
 * When the chain cannot run the transfer: the last figure the chain gave for the
 * class, scaled to the factor now (java-tron adds factor / 10,000 of every
 * opcode's energy), rounded up; before any, the mainnet measurements.
 */
function scaledFigure(cache: EnergyCache, recipientHoldsUsdt: boolean, factor: number): bigint {
  const last = cache.lastByClass.get(recipientHoldsUsdt);
  if (!last) return recipientHoldsUsdt ? MEASURED_ENERGY_HOLDER : MEASURED_ENERGY_NEW_HOLDER;
  const numerator = last.energy * (ENERGY_FACTOR_DECIMAL + BigInt(factor));
  const denominator = ENERGY_FACTOR_DECIMAL + BigInt(last.factor);
  return (numerator + denominator - 1n) / denominator;
}

/** fee_limit for `energy` at `energyPriceSun`: the estimate plus the margin, rounded up, at least the floor. */
export function feeLimitFor(energy: bigint, energyPriceSun: bigint): bigint {
  const withMargin = (energy * energyPriceSun * (100n + FEE_LIMIT_MARGIN_PERCENT) + 99n) / 100n;
  return withMargin > FEE_LIMIT_FLOOR_SUN ? withMargin : FEE_LIMIT_FLOOR_SUN;
}

/** An address no one has used: a recipient of the dear class (no USDT) to measure that figure with. */
export function freshRecipient(): TronAddress {
  return tronAddressFromEvm(randomBytes(20));
}
