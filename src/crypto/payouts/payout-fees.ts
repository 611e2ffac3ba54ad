// Fee quotes of payouts: the network fee is what the chain would burn for the
// USDT transfer from the hot wallet (transfer-cost.ts, at the chain's own
// prices), converted at PAYGATE_TRX_USDT_RATE and rounded up to the cent; the
// service fee is the shop's tariff. Quoting reads the chain: an unreachable
// node is 503 service_unavailable, and nothing is created.
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../../errors.ts';
import type { ChainAccess } from '../receiving/crypto-chain.ts';
import { estimateUsdtTransferCost, sunToMicroUsdt } from '../sending/transfer-cost.ts';
import type { ChainPrices } from '../tron/node-client.ts';
import type { TronAddress } from '../tron/address.ts';
import { ceilToCent, serviceFeeOf, type PayoutSettings } from './payout-settings.ts';

const NODE_RETRY_AFTER_SECONDS = 10;
/**
 * How long the chain's prices, and a recipient seen WITHOUT USDT, are taken as
 * read. Prices change by committee proposal (days apart); a recipient without
 * USDT is quoted the dear 130k-energy transfer, so a stale "no USDT" can only
 * over-quote.
 */
export const QUOTE_CACHE_MS = 60_000;
/**
 * How long a recipient seen HOLDING USDT is taken as read: short, because it may
 * empty meanwhile, and then the cheap quote (65k energy) under-charges by the
 * difference, which the gateway's network_fees absorbs. Payouts to the same
 * recipient in a burst (a merchant paying one exchange address) skip the node.
 */
export const QUOTE_HOLDER_CACHE_MS = 10_000;
const QUOTE_CACHE_ADDRESSES_MAX = 10_000;

interface NodeQuoteCache {
  prices?: { readonly value: Promise<ChainPrices>; readonly at: number };
  /** Address → when its balance was read and whether it held USDT. */
  readonly recipients: Map<string, { readonly at: number; readonly holds: boolean }>;
}

const caches = new WeakMap<object, NodeQuoteCache>();

/** The node's prices and balances for quoting, with the cache above. */
function quotingNode(node: ChainAccess['node']) {
  let cache = caches.get(node);
  if (!cache) caches.set(node, (cache = { recipients: new Map() }));
  const own = cache;
  return {
    getChainPrices(): Promise<ChainPrices> {
      const now = Date.now();
      if (!own.prices || now - own.prices.at > QUOTE_CACHE_MS) {
        const value = node.getChainPrices();
        own.prices = { value, at: now };
        // A failed read is not kept: the next quote asks again.
        value.catch(() => {
          if (own.prices?.value === value) own.prices = undefined;
        });
      }
      return own.prices.value;
    },
    /** Only "zero or not" matters to a quote: a cached holder answers 1 micro-USDT. */
    async getUsdtBalance(address: TronAddress): Promise<bigint> {
      const seen = own.recipients.get(address);
      const now = Date.now();
      if (seen !== undefined && now - seen.at <= (seen.holds ? QUOTE_HOLDER_CACHE_MS : QUOTE_CACHE_MS)) return seen.holds ? 1n : 0n;
      const balance = await node.getUsdtBalance(address);
      own.recipients.delete(address);
      if (own.recipients.size >= QUOTE_CACHE_ADDRESSES_MAX) own.recipients.delete(own.recipients.keys().next().value!);
      own.recipients.set(address, { at: Date.now(), holds: balance > 0n });
      return balance;
    },
  };
}
/** Recipients whose USDT balance a batch quote reads at once. */
const QUOTE_CONCURRENCY = 16;

export interface PayoutQuote {
  readonly amountMicro: bigint;
  readonly networkFeeMicro: bigint;
  readonly serviceFeeMicro: bigint;
  readonly totalDebitMicro: bigint;
  /** micro-USDT per TRX the network fee was converted at. */
  readonly rateMicro: bigint;
}

export interface QuoteItem {
  readonly address: TronAddress;
  readonly amountMicro: bigint;
}

/**
 * Quotes every item (one for a single payout, up to 500 for a batch) from the
 * chain's prices and each recipient's USDT balance (65k or 130k energy).
 */
export async function quotePayouts(
  access: ChainAccess,
  logger: Pick<Logger, 'warn'>,
  settings: PayoutSettings,
  rateMicro: bigint,
  items: readonly QuoteItem[],
): Promise<PayoutQuote[]> {
  const node = quotingNode(access.node);
  // Of several items to one recipient without USDT, only the first that lands pays for the new holder
  // (130k energy); the others find a holder (65k). So the first in the list is quoted as the chain says
  // and the rest as to a holder: the batch is charged what its transfers burn together. (Should that first
  // one fail on chain, the gateway bears the difference on the next.)
  const firstOf = new Map<string, number>();
  for (const [index, item] of items.entries()) if (!firstOf.has(item.address)) firstOf.set(item.address, index);
  const asHolder = { getChainPrices: () => node.getChainPrices(), getUsdtBalance: async () => 1n };
  const from = access.addressKey.hotWalletAddress;
  const quotes: PayoutQuote[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index]!;
      const cost = await estimateUsdtTransferCost(firstOf.get(item.address) === index ? node : asHolder, { from, to: item.address, amount: item.amountMicro });
      const networkFeeMicro = ceilToCent(sunToMicroUsdt(cost.totalSun, rateMicro));
      const serviceFeeMicro = serviceFeeOf(settings, item.amountMicro);
      quotes[index] = { amountMicro: item.amountMicro, networkFeeMicro, serviceFeeMicro, totalDebitMicro: item.amountMicro + networkFeeMicro + serviceFeeMicro, rateMicro };
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(QUOTE_CONCURRENCY, items.length) }, worker));
  } catch (error) {
    logger.warn({ err: error, chain: access.chain }, 'payout fee quote: the TRON node did not answer');
    throw new ServiceUnavailableError('The TRON node cannot be reached for a network fee quote; nothing was created. Retry later.', NODE_RETRY_AFTER_SECONDS);
  }
  return quotes;
}
