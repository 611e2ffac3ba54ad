// The energy part of a hot-wallet transfer's quote (a payout's, a refund's, a
// withdrawal's) follows the source that will supply it (docs/payouts.md "The
// quoted network fee"): nothing when the hot
// wallet's own staked energy, free now and promised to no other transfer, covers
// the whole transfer — a creation reserves that energy for its transfer
// (energy/energy-reservations.ts), a quote only looks; otherwise a rental's
// price when `rent` is on and renting costs less than burning; otherwise the
// burn price. A transfer that may wait days before it is queued (a withdrawal
// awaiting approval) is quoted off own energy: own energy is not held for it.
// The bandwidth part is always quoted: the hot wallet's free bandwidth is not
// reserved, and every transfer of the day draws on it.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/transaction.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { rentalProviderFor } from '../energy/chain-rental.ts';
import { EnergyProviderError, type EnergyProvider } from '../energy/energy-provider.ts';
import { claimOwnEnergy, reservedEnergy, releaseClaims } from '../energy/energy-reservations.ts';
import { withEnergyPriced, type PayoutQuote } from './payout-fees.ts';

export interface EnergyQuoteDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Pick<Logger, 'warn'>;
  readonly config: Pick<Config, 'tronEnergySources' | 'tronEnergyRental'>;
}

/** The hot wallet's energy free on chain now; 0 when its stake is not a source or the node does not answer (then the quote burns, never less). */
async function ownEnergyFree(deps: EnergyQuoteDeps, access: ChainAccess): Promise<bigint> {
  if (!deps.config.tronEnergySources.has('stake')) return 0n;
  try {
    const resources = await access.node.getAccountResources(access.addressKey.hotWalletAddress);
    return BigInt(resources.energyAvailable);
  } catch (error) {
    deps.logger.warn(
      { err: error, chain: access.chain },
      'network fee quote: the hot wallet’s energy could not be read',
    );
    return 0n;
  }
}

/** The quotes not on own energy, priced at a rental where one is cheaper than burning. */
async function withRentals(
  deps: EnergyQuoteDeps,
  access: ChainAccess,
  quotes: readonly PayoutQuote[],
  onOwnEnergy: ReadonlySet<number>,
): Promise<PayoutQuote[]> {
  const provider = rentalProviderFor(deps.config, access.chain);
  const rentalSun = new Map<bigint, bigint | null>();
  const priced: PayoutQuote[] = [];
  for (const [index, quote] of quotes.entries()) {
    if (onOwnEnergy.has(index)) {
      priced.push(withEnergyPriced(quote, 0n));
      continue;
    }
    if (!provider) {
      priced.push(quote);
      continue;
    }
    if (!rentalSun.has(quote.energy)) rentalSun.set(quote.energy, await rentalPrice(deps, access, provider, quote));
    const rent = rentalSun.get(quote.energy) ?? null;
    priced.push(rent !== null && rent < quote.energySun ? withEnergyPriced(quote, rent) : quote);
  }
  return priced;
}

/** What renting the transfer's energy costs now; null when the provider does not answer (the quote burns). */
async function rentalPrice(
  deps: EnergyQuoteDeps,
  access: ChainAccess,
  provider: EnergyProvider,
  quote: PayoutQuote,
): Promise<bigint | null> {
  try {
    return (await provider.quote(quote.energy)).priceSun;
  } catch (error) {
    if (!(error instanceof EnergyProviderError)) throw error;
    deps.logger.warn({ err: error, chain: access.chain }, 'network fee quote: the rental provider did not answer');
    return null;
  }
}

/** The items, in order, that fit whole into `left` own energy. */
function fittingInOrder(quotes: readonly PayoutQuote[], left: bigint): Set<number> {
  const fitting = new Set<number>();
  for (const [index, quote] of quotes.entries()) {
    if (quote.energy > left) continue;
    fitting.add(index);
    left -= quote.energy;
  }
  return fitting;
}

/** What a creation would charge now, reserving nothing (POST /v1/crypto/payouts/quote, a batch's, a refund's, a withdrawal's preview). */
export async function previewEnergyQuotes(
  deps: EnergyQuoteDeps,
  access: ChainAccess,
  quotes: readonly PayoutQuote[],
): Promise<PayoutQuote[]> {
  const free = await ownEnergyFree(deps, access);
  const left = free > 0n ? free - (await reservedEnergy(deps.db, access.chain, deps.clock.now())) : 0n;
  return withRentals(deps, access, quotes, fittingInOrder(quotes, left));
}

/**
 * The quotes of transfers that reserve no own energy: a rental's price where one
 * is cheaper than burning, else the burn price. For a transfer not queued at its
 * creation (a withdrawal awaiting a second person, maybe for days): holding own
 * energy that long would price every other transfer at the burn price meanwhile.
 */
export function offOwnEnergyQuotes(
  deps: EnergyQuoteDeps,
  access: ChainAccess,
  quotes: readonly PayoutQuote[],
): Promise<PayoutQuote[]> {
  return withRentals(deps, access, quotes, new Set());
}

/**
 * A creation on reserved quotes: own energy is reserved for each transfer (by its
 * id, in order) it covers whole, `write` creates with the quotes that follow, and
 * the reservations are given back when it wrote nothing (`created` false: a
 * replay, a withdrawal that turned out to await approval; or it threw).
 */
export async function createOnEnergyQuotes<T extends { readonly created: boolean }>(
  deps: EnergyQuoteDeps,
  access: ChainAccess,
  quotes: readonly PayoutQuote[],
  transferIds: readonly string[],
  write: (quotes: readonly PayoutQuote[]) => Promise<T>,
): Promise<T> {
  const free = await ownEnergyFree(deps, access);
  const reserved = await claimOwnEnergy(
    deps.db,
    deps.clock,
    access.chain,
    free,
    quotes.map((quote, index) => ({ transferId: transferIds[index]!, energy: quote.energy })),
  );
  const onOwnEnergy = new Set(transferIds.flatMap((id, index) => (reserved.has(id) ? [index] : [])));
  let written = false;
  try {
    const outcome = await write(await withRentals(deps, access, quotes, onOwnEnergy));
    written = outcome.created;
    return outcome;
  } finally {
    if (!written) await releaseClaims(deps.db, [...reserved]);
  }
}
