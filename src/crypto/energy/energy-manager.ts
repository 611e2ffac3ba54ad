// The energy manager (docs/payouts.md "Energy"): before a USDT transfer is
// signed, where its energy comes from, by the sources the operator turned on
// (PAYGATE_TRON_ENERGY_SOURCES) and by price. The sender's own energy (the hot
// wallet's stake, or what was delegated to a deposit address) is used first —
// the chain takes it before burning anything. For the rest: a rental when one
// costs less than burning TRX for it (the transfer then waits, unsigned, until
// the provider's delegation is on chain, for a bounded time), else TRX burned — under the burn cap,
// which the executor checks. A rental is ordered under our own id first, so an
// order whose answer was lost is found again by that id, never paid twice.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/transaction.ts';
import { newId } from '../../ids.ts';
import type { TronAddress } from '../tron/address.ts';
import type { ChainName } from '../chain/crypto-chain.ts';
import { EnergyProviderError, type EnergyProvider, type RentalOrder } from './energy-provider.ts';
import * as repository from './energy-repository.ts';
import type { EnergyRentalRow } from './energy-repository.ts';
import type { EnergyPlan, EnergySourceSetting } from './energy-sources.ts';

/** Rentals ordered for one transfer at most: past them, it burns (or waits, when burning is off). */
const RENTALS_PER_TRANSFER_MAX = 2;
/**
 * How long a rental may stay pending (ordered, not yet delegated) before it is
 * given up and the transfer falls back. itrx publishes no delivery time: its
 * order page says only to query the order or await the callback
 * (develop.itrx.io/api/order-create.html). A delivery is one DelegateResource
 * transaction, on chain within a block or two (3 s each), and itrx retries a
 * failed delegation itself (order status 32, "retrying after an error",
 * api/order-query.html); ten minutes leaves room for many such retries, while a
 * one-hour rental arriving later has lost a sixth of its hour and the payout
 * has waited long enough. Without this bound a provider answering "pending"
 * (or nothing) for ever would hold the transfer unsigned for ever.
 */
export const RENTAL_DELIVERY_WAIT_MS = 10 * 60_000;
/** How long a delivered rental's energy is waited for on the node read before another is ordered. */
export const RENTAL_VISIBLE_WAIT_MS = 60_000;

interface EnergyRequest {
  readonly transferId: string;
  readonly address: TronAddress;
  /** Energy the transfer takes. */
  readonly energy: bigint;
  /** The sender's own energy free now, less what its transfers in flight will take. */
  readonly energyAvailable: bigint;
  readonly energyPriceSun: bigint;
  /** What the sender's own energy is: the hot wallet's stake, or delegated to a deposit address. */
  readonly ownPlan: Extract<EnergyPlan, 'staked' | 'delegated'>;
}

type EnergyArrangement =
  | {
      readonly kind: 'ready';
      /** The source named for the energy: the rest, if any, is burned. */
      readonly plan: EnergyPlan;
      /** What this transfer's rentals cost so far; null without any. */
      readonly rentalSun: bigint | null;
    }
  | { readonly kind: 'waiting'; readonly reason: string };

/** One pass's view: the rentals of its transfers, read once. */
export interface PassEnergy {
  arrange(request: EnergyRequest): Promise<EnergyArrangement>;
}

export interface EnergyManager {
  readonly sources: ReadonlySet<EnergySourceSetting>;
  forPass(transferIds: readonly string[]): Promise<PassEnergy>;
}

export interface EnergyManagerOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
  readonly chain: ChainName;
  readonly sources: ReadonlySet<EnergySourceSetting>;
  /** Required when `rent` is among the sources. */
  readonly provider?: EnergyProvider | undefined;
}

export function createEnergyManager(options: EnergyManagerOptions): EnergyManager {
  if (options.sources.has('rent') && !options.provider)
    throw new Error('the energy source `rent` needs a rental provider (PAYGATE_TRON_ENERGY_RENTAL_URL)');
  return {
    sources: options.sources,
    async forPass(transferIds) {
      const byTransfer = new Map<string, EnergyRentalRow[]>();
      for (const rental of await repository.rentalsOf(options.db, transferIds)) {
        const list = byTransfer.get(rental.transfer_id);
        if (list) list.push(rental);
        else byTransfer.set(rental.transfer_id, [rental]);
      }
      return { arrange: (request) => arrange(options, byTransfer.get(request.transferId) ?? [], request) };
    },
  };
}

/**
 * What this transfer's rentals cost: every one but those the provider failed
 * (it refunds them). One given up undelivered counts: it was paid for at the
 * order and nothing says it was refunded.
 */
function rentalSunOf(rentals: readonly EnergyRentalRow[]): bigint | null {
  const paid = rentals.filter(
    (rental) => rental.status !== 'failed' || rental.failure_reason === 'not_delivered_in_time',
  );
  return paid.length === 0 ? null : paid.reduce((sum, rental) => sum + rental.price_sun, 0n);
}

/** The provider's word on an order: null when it has none, undefined when it did not answer. */
async function askProvider(
  options: EnergyManagerOptions,
  rental: EnergyRentalRow,
): Promise<RentalOrder | null | undefined> {
  try {
    return await options.provider!.order(rental.id);
  } catch (error) {
    if (!(error instanceof EnergyProviderError)) throw error;
    options.logger.warn(
      { err: error, rental_id: rental.id },
      'energy rental: the provider did not answer about an order',
    );
    return undefined;
  }
}

/** Records how a pending rental ended; another process that ended it first wins, and this pass waits. */
async function endRental(
  options: EnergyManagerOptions,
  rental: EnergyRentalRow,
  change: Pick<EnergyRentalRow, 'status' | 'price_sun' | 'failure_reason'>,
): Promise<EnergyRentalRow> {
  const now = options.clock.now();
  const recorded = await repository.setRentalStatus(options.db, rental.id, {
    status: change.status,
    priceSun: change.price_sun,
    failureReason: change.failure_reason,
    now,
  });
  if (!recorded) return rental;
  if (change.status === 'failed')
    options.logger.warn(
      { rental_id: rental.id, transfer_id: rental.transfer_id, reason: change.failure_reason },
      'energy rental failed: the transfer falls back',
    );
  return { ...rental, ...change, updated_at: now };
}

/**
 * A pending rental's state, asked of the provider and recorded when it changed;
 * given up once it has been pending for RENTAL_DELIVERY_WAIT_MS, however the
 * provider answers (or does not).
 */
async function refreshPending(options: EnergyManagerOptions, rental: EnergyRentalRow): Promise<EnergyRentalRow> {
  const order = await askProvider(options, rental);
  // No such order (null): the request never reached the provider (its answer was lost with it).
  if (order === null)
    return endRental(options, rental, { status: 'failed', price_sun: 0n, failure_reason: 'not_ordered' });
  if (order && order.status !== 'pending')
    return endRental(options, rental, {
      status: order.status,
      price_sun: order.priceSun,
      failure_reason: order.status === 'failed' ? 'provider_failed' : null,
    });
  const pendingMs = options.clock.now().getTime() - rental.created_at.getTime();
  if (pendingMs < RENTAL_DELIVERY_WAIT_MS) return rental;
  return endRental(options, rental, {
    status: 'failed',
    price_sun: rental.price_sun,
    failure_reason: 'not_delivered_in_time',
  });
}

async function arrange(
  options: EnergyManagerOptions,
  known: EnergyRentalRow[],
  request: EnergyRequest,
): Promise<EnergyArrangement> {
  const rentals = await Promise.all(
    known.map((rental) => (rental.status === 'pending' ? refreshPending(options, rental) : rental)),
  );
  known.splice(0, known.length, ...rentals);
  const last = rentals.at(-1);
  const rented = last?.status === 'delivered';
  const shortfall = request.energy > request.energyAvailable ? request.energy - request.energyAvailable : 0n;
  if (shortfall === 0n)
    return { kind: 'ready', plan: rented ? 'rented' : request.ownPlan, rentalSun: rentalSunOf(rentals) };
  if (last?.status === 'pending') return { kind: 'waiting', reason: 'rented energy is on its way' };
  const nowMs = options.clock.now().getTime();
  if (rented && nowMs - last.updated_at.getTime() < RENTAL_VISIBLE_WAIT_MS)
    return { kind: 'waiting', reason: 'rented energy delivered, not yet seen on chain' };
  // Failed ones count too: a provider failing every order must not be asked for ever.
  if (options.sources.has('rent') && rentals.length < RENTALS_PER_TRANSFER_MAX) {
    const ordered = await orderRental(options, request, shortfall, known);
    if (ordered) return ordered;
  }
  if (options.sources.has('burn'))
    return {
      kind: 'ready',
      plan: request.energyAvailable > 0n ? request.ownPlan : 'burned',
      rentalSun: rentalSunOf(known),
    };
  return { kind: 'waiting', reason: 'no energy source can cover it and burning TRX is turned off' };
}

/** Rents the shortfall when that costs less than burning it (or burning is off); null when it does not, or the provider failed. */
async function orderRental(
  options: EnergyManagerOptions,
  request: EnergyRequest,
  shortfall: bigint,
  known: EnergyRentalRow[],
): Promise<EnergyArrangement | null> {
  const provider = options.provider!;
  const burnSun = shortfall * request.energyPriceSun;
  const id = newId('energyRental');
  const now = options.clock.now();
  try {
    const quote = await provider.quote(shortfall);
    if (options.sources.has('burn') && quote.priceSun >= burnSun) return null;
    // Recorded before the order: an order whose answer is lost is found again by this id.
    await repository.insertRental(options.db, {
      id,
      chain: options.chain,
      transferId: request.transferId,
      address: request.address,
      provider: provider.name,
      orderId: id,
      energy: quote.energy,
      priceSun: quote.priceSun,
      status: 'pending',
      now,
    });
    const order = await provider.rent({ address: request.address, energy: quote.energy, reference: id });
    const failureReason = order.status === 'failed' ? 'provider_failed' : null;
    await repository.setRentalStatus(options.db, id, {
      status: order.status,
      priceSun: order.priceSun,
      failureReason,
      now,
    });
    known.push({
      id,
      chain: options.chain,
      transfer_id: request.transferId,
      address: request.address,
      provider: provider.name,
      order_id: order.orderId,
      energy: quote.energy,
      price_sun: order.priceSun,
      status: order.status,
      failure_reason: failureReason,
      created_at: now,
      updated_at: now,
    });
    options.logger.info(
      {
        transfer_id: request.transferId,
        energy: quote.energy.toString(),
        price_sun: order.priceSun.toString(),
        burn_sun: burnSun.toString(),
      },
      'energy rented for an outgoing transfer: cheaper than burning TRX',
    );
    return { kind: 'waiting', reason: 'rented energy is on its way' };
  } catch (error) {
    if (!(error instanceof EnergyProviderError)) throw error;
    options.logger.warn(
      { err: error, transfer_id: request.transferId },
      'energy rental: the provider failed; the transfer falls back',
    );
    return null;
  }
}
