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
 * Quotes every item (one for a single payout, up to 500 for a batch): the chain's
 * prices are read once, each recipient's USDT balance (65k or 130k energy) once.
 */
export async function quotePayouts(
  access: ChainAccess,
  logger: Pick<Logger, 'warn'>,
  settings: PayoutSettings,
  rateMicro: bigint,
  items: readonly QuoteItem[],
): Promise<PayoutQuote[]> {
  let prices: Promise<ChainPrices> | undefined;
  const node = {
    getChainPrices: () => (prices ??= access.node.getChainPrices()),
    getUsdtBalance: (address: TronAddress) => access.node.getUsdtBalance(address),
  };
  const from = access.addressKey.hotWalletAddress;
  const quotes: PayoutQuote[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      const item = items[index]!;
      const cost = await estimateUsdtTransferCost(node, { from, to: item.address, amount: item.amountMicro });
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
