// The chain reads a fee quote makes — the chain's prices, whether a recipient
// holds USDT, whether the USDT contract blacklisted it — cached per chain access
// (crypto-chain.ts makes one per access), so the quotes of payouts, refunds and
// withdrawals share one cache and concurrent quotes of one recipient one request.
import { LRUCache } from 'lru-cache';
import type { TronAddress } from '../tron/address.ts';
import type { ChainPrices, TronNodeClient } from '../tron/node-client.ts';

type QuotedNode = Pick<TronNodeClient, 'getChainPrices' | 'getUsdtBalance' | 'isUsdtBlacklisted'>;

/**
 * How long the chain's prices, a recipient seen WITHOUT USDT, and a recipient's
 * blacklist standing are taken as read. Prices change by committee proposal
 * (days apart); a recipient without USDT is quoted the dear 130k-energy
 * transfer, so a stale "no USDT" can only over-quote; an address blacklisted
 * meanwhile is still caught before signing (the executor's dry run) or
 * classified after its REVERT.
 */
const QUOTE_CACHE_MS = 60_000;
/**
 * How long a recipient seen HOLDING USDT is taken as read: short, because it may
 * empty meanwhile, and then the cheap quote (65k energy) under-charges by the
 * difference, which the gateway's network_fees absorbs. Payouts to the same
 * recipient in a burst (a merchant paying one exchange address) skip the node.
 */
const QUOTE_HOLDER_CACHE_MS = 10_000;
const QUOTE_CACHE_ADDRESSES_MAX = 10_000;

interface NodeQuoteCache {
  prices?: { readonly value: Promise<ChainPrices>; readonly at: number };
  /** Address → when its balance was read and whether it held USDT. */
  readonly recipients: LRUCache<string, { readonly at: number; readonly holds: boolean }>;
  /** Address → when isBlackListed was asked and what it answered. */
  readonly blacklisted: LRUCache<string, { readonly at: number; readonly listed: boolean }>;
  /** Look-ups under way, by `kind:address`: concurrent quotes of one recipient share one request. */
  readonly pending: Map<string, Promise<unknown>>;
}

export interface QuoteReads {
  getChainPrices(): Promise<ChainPrices>;
  /** Only "zero or not" matters to a quote: a cached holder answers 1 micro-USDT. */
  getUsdtBalance(address: TronAddress): Promise<bigint>;
  isUsdtBlacklisted(address: TronAddress): Promise<boolean>;
}

/** The node's prices and balances for quoting, with the cache above. */
export function createQuoteReads(node: QuotedNode): QuoteReads {
  const own: NodeQuoteCache = {
    recipients: new LRUCache({ max: QUOTE_CACHE_ADDRESSES_MAX }),
    blacklisted: new LRUCache({ max: QUOTE_CACHE_ADDRESSES_MAX }),
    pending: new Map(),
  };
  const shared = <T>(key: string, ask: () => Promise<T>): Promise<T> => {
    let pending = own.pending.get(key) as Promise<T> | undefined;
    if (!pending) {
      pending = ask().finally(() => own.pending.delete(key));
      own.pending.set(key, pending);
    }
    return pending;
  };
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
    async getUsdtBalance(address: TronAddress): Promise<bigint> {
      const seen = own.recipients.get(address);
      const now = Date.now();
      if (seen !== undefined && now - seen.at <= (seen.holds ? QUOTE_HOLDER_CACHE_MS : QUOTE_CACHE_MS))
        return seen.holds ? 1n : 0n;
      const balance = await shared(`balance:${address}`, () => node.getUsdtBalance(address));
      own.recipients.set(address, { at: Date.now(), holds: balance > 0n });
      return balance;
    },
    async isUsdtBlacklisted(address: TronAddress): Promise<boolean> {
      const seen = own.blacklisted.get(address);
      if (seen !== undefined && Date.now() - seen.at <= QUOTE_CACHE_MS) return seen.listed;
      const listed = await shared(`blacklisted:${address}`, () => node.isUsdtBlacklisted(address));
      own.blacklisted.set(address, { at: Date.now(), listed });
      return listed;
    },
  };
}
