// Fee quotes of hot-wallet transfers (payouts, refunds, withdrawals): the network fee is at most what the chain would burn for the
// USDT transfer from the hot wallet (less when its energy comes from the hot
// wallet's own stake or a cheaper rental: energy-quotes.ts) — the chain's own energy figure for the
// recipient's class at the contract's energy factor now (transfer-energy.ts,
// the same figure the executor signs with) and the chain's prices (read through
// the chain access's cache, chain/quote-reads.ts) — converted
// at PAYGATE_TRX_USDT_RATE and rounded up to the cent; the service fee is the
// shop's tariff. A recipient the USDT contract blacklisted is refused (400
// address_blacklisted). Quoting reads the chain: an unreachable node, or an
// energy figure above PAYGATE_TRON_TRANSFER_ENERGY_MAX, is 503
// service_unavailable, and nothing is created.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { AddressBlacklistedError, ServiceUnavailableError } from '../../errors.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { sunToMicroUsdt, USDT_TRANSFER_BANDWIDTH } from '../sending/transfer-cost.ts';
import { TransferEnergyAboveCeilingError } from '../chain/transfer-energy.ts';
import type { TronAddress } from '../tron/address.ts';
import { ceilToCent, serviceFeeOf, type PayoutSettings } from './payout-settings.ts';

const NODE_RETRY_AFTER_SECONDS = 10;
/** Energy above the ceiling is a spike of the contract's energy factor: it falls over hours (one maintenance cycle is 6 h). */
const ENERGY_RETRY_AFTER_SECONDS = 600;
/** Recipients whose USDT balance a batch quote reads at once. */
const QUOTE_CONCURRENCY = 16;

export interface PayoutQuote {
  readonly amountMicro: bigint;
  readonly networkFeeMicro: bigint;
  readonly serviceFeeMicro: bigint;
  readonly totalDebitMicro: bigint;
  /** micro-USDT per TRX the network fee was converted at. */
  readonly rateMicro: bigint;
  /** Energy the transfer takes: the chain's figure the fee was quoted for. */
  readonly energy: bigint;
  /** The network fee's parts in sun: the energy (burned at the chain's price, rented, or 0 on own energy) and the bandwidth. */
  readonly energySun: bigint;
  readonly bandwidthSun: bigint;
}

/** A quote whose network fee is `energySun` for the energy and `bandwidthSun` for the bandwidth, rounded up to the cent. */
function quoteOf(
  amountMicro: bigint,
  serviceFeeMicro: bigint,
  rateMicro: bigint,
  energy: bigint,
  energySun: bigint,
  bandwidthSun: bigint,
): PayoutQuote {
  const networkFeeMicro = ceilToCent(sunToMicroUsdt(energySun + bandwidthSun, rateMicro));
  return {
    amountMicro,
    networkFeeMicro,
    serviceFeeMicro,
    totalDebitMicro: amountMicro + networkFeeMicro + serviceFeeMicro,
    rateMicro,
    energy,
    energySun,
    bandwidthSun,
  };
}

/** The same quote with its energy part priced at `energySun` (0 on reserved own energy, a rental's price). */
export function withEnergyPriced(quote: PayoutQuote, energySun: bigint): PayoutQuote {
  return quoteOf(
    quote.amountMicro,
    quote.serviceFeeMicro,
    quote.rateMicro,
    quote.energy,
    energySun,
    quote.bandwidthSun,
  );
}

export interface QuoteItem {
  readonly address: TronAddress;
  readonly amountMicro: bigint;
}

export interface QuoteDeps {
  readonly logger: Pick<Logger, 'warn'>;
  readonly clock: Clock;
  readonly config: Pick<Config, 'trxUsdtRateMicro' | 'tronTransferEnergyMax'>;
}

/**
 * Quotes every item (one for a single payout, up to 500 for a batch) from the
 * chain's prices and the chain's energy figure for each recipient's class (it
 * holds USDT or not). Each distinct recipient is asked isBlackListed first.
 */
export async function quotePayouts(
  access: ChainAccess,
  deps: QuoteDeps,
  settings: PayoutSettings,
  items: readonly QuoteItem[],
): Promise<PayoutQuote[]> {
  const node = access.quoteReads;
  const energy = access.transferEnergy;
  const rateMicro = deps.config.trxUsdtRateMicro;
  // Of several items to one recipient without USDT, only the first that lands pays for the new holder
  // (130k energy); the others find a holder (65k). So the first in the list is quoted as the chain says
  // and the rest as to a holder: the batch is charged what its transfers burn together. (Should that first
  // one fail on chain, the gateway bears the difference on the next.)
  const firstOf = new Map<string, number>();
  for (const [index, item] of items.entries()) if (!firstOf.has(item.address)) firstOf.set(item.address, index);
  const from = access.addressKey.hotWalletAddress;
  const quotes: PayoutQuote[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index]!;
      const first = firstOf.get(item.address) === index;
      const [prices, listed, balance] = await Promise.all([
        node.getChainPrices(),
        first ? node.isUsdtBlacklisted(item.address) : false,
        first ? node.getUsdtBalance(item.address) : 1n,
      ]);
      if (listed)
        throw new AddressBlacklistedError(
          `${item.address} is blacklisted by the USDT contract's issuer: a transfer to it would revert on chain. Nothing was created.`,
        );
      const recipientHoldsUsdt = balance > 0n;
      // A holder's figure is measured on a transfer to a holder: the recipient itself, or (for the later items
      // to a recipient that has no USDT yet) the hot wallet to itself, which rewrites the same two kinds of slot.
      const units = await energy.energyOf(deps.clock, {
        from,
        to: recipientHoldsUsdt && !first ? from : item.address,
        recipientHoldsUsdt,
      });
      if (units > deps.config.tronTransferEnergyMax)
        throw new TransferEnergyAboveCeilingError(units, deps.config.tronTransferEnergyMax);
      quotes[index] = quoteOf(
        item.amountMicro,
        serviceFeeOf(settings, item.amountMicro),
        rateMicro,
        units,
        units * prices.energyPriceSun,
        USDT_TRANSFER_BANDWIDTH * prices.bandwidthPriceSun,
      );
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(QUOTE_CONCURRENCY, items.length) }, worker));
  } catch (error) {
    if (error instanceof AddressBlacklistedError) throw error;
    if (error instanceof TransferEnergyAboveCeilingError) {
      deps.logger.warn(
        { err: error, chain: access.chain },
        'network fee quote: the transfer energy is above the configured ceiling',
      );
      throw new ServiceUnavailableError(
        `A USDT transfer costs ${error.energy} energy on chain now, above this gateway's ceiling of ${error.ceiling}; nothing was created. Retry later.`,
        ENERGY_RETRY_AFTER_SECONDS,
      );
    }
    deps.logger.warn({ err: error, chain: access.chain }, 'network fee quote: the TRON node did not answer');
    throw new ServiceUnavailableError(
      'The TRON node cannot be reached for a network fee quote; nothing was created. Retry later.',
      NODE_RETRY_AFTER_SECONDS,
    );
  }
  return quotes;
}
