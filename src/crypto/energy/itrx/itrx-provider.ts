// itrx.io's energy rental API (https://develop.itrx.io), as published:
//  - GET  /api/v1/frontend/index-data            prices: tiered_pricing[{period, price sun/energy}],
//         minimum_order_energy, small_amount and small_addition (TRX added below it)  (api/index-data.html)
//  - POST /api/v1/frontend/order                 {energy_amount, period '1H', receive_address, out_trade_no}
//         → {errno 0, serial, amount (sun), balance}                                    (api/order-create.html)
//  - GET  /api/v1/frontend/order/query?out_trade_no=…  → {errno, order_no, amount, status, …}; errno 404
//         when there is none; status 40 completed, 0/41/43 ended without energy    (api/order-query.html)
// Every request carries API-KEY; a POST also TIMESTAMP (seconds) and SIGNATURE =
// hex HMAC-SHA256 with the API secret of `${timestamp}&${body}`, the body being the
// JSON of the parameters with sorted keys and no spaces (general/sign.html).
import { createHmac } from 'node:crypto';
import {
  EnergyProviderError,
  type EnergyProvider,
  type RentalOrder,
  type RentalOrderStatus,
  type RentalQuote,
} from '../energy-provider.ts';

const REQUEST_TIMEOUT_MS = 10_000;
const SUN_PER_TRX = 1_000_000;
/** itrx's period code of a one-hour rental in tiered_pricing (0) and in an order ('1H'). */
const ONE_HOUR_PRICING_PERIOD = 0;
const ONE_HOUR_ORDER_PERIOD = '1H';

export interface ItrxSettings {
  /** https://itrx.io, or a simulator's address. */
  readonly url: string;
  readonly apiKey: string;
  readonly apiSecret: string;
}

interface IndexData {
  readonly minimum_order_energy: number;
  readonly small_amount: number;
  readonly small_addition: number;
  readonly tiered_pricing: readonly { readonly period: number; readonly price: number }[];
}

/** The JSON itrx signs and reads: keys sorted, no spaces (Python's json.dumps(sort_keys=True, separators=(',', ':'))). */
export function itrxCanonicalJson(parameters: Readonly<Record<string, string | number>>): string {
  const sorted = Object.fromEntries(Object.entries(parameters).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify(sorted);
}

export function itrxSignature(apiSecret: string, timestamp: string, body: string): string {
  return createHmac('sha256', apiSecret).update(`${timestamp}&${body}`).digest('hex');
}

/** An order's status code as ours: 40 completed; 0 (timed out), 41 (refunded) and 43 (aborted) ended with none. */
function itrxOrderStatus(code: number): RentalOrderStatus {
  if (code === 40) return 'delivered';
  if (code === 0 || code === 41 || code === 43) return 'failed';
  return 'pending';
}

function integer(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new EnergyProviderError(`itrx answered a ${what} that is not a whole number: ${String(value)}`);
  return value;
}

export function createItrxProvider(settings: ItrxSettings): EnergyProvider {
  const base = settings.url.replace(/\/+$/, '');

  const call = async (path: string, init: RequestInit = {}): Promise<Record<string, unknown>> => {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        ...init,
        headers: { 'API-KEY': settings.apiKey, ...(init.headers as Record<string, string> | undefined) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new EnergyProviderError(`itrx could not be reached: ${(error as Error).message}`);
    }
    if (!response.ok) throw new EnergyProviderError(`itrx answered HTTP ${response.status} to ${path}`);
    const body: unknown = await response.json().catch(() => undefined);
    if (typeof body !== 'object' || body === null)
      throw new EnergyProviderError(`itrx answered no JSON object to ${path}`);
    return body as Record<string, unknown>;
  };

  const errno = (body: Record<string, unknown>): number => (typeof body['errno'] === 'number' ? body['errno'] : 0);

  const quote = async (energy: bigint): Promise<RentalQuote> => {
    const data = (await call('/api/v1/frontend/index-data')) as unknown as IndexData;
    const tier = (data.tiered_pricing ?? []).find((entry) => entry.period === ONE_HOUR_PRICING_PERIOD);
    if (!tier) throw new EnergyProviderError('itrx lists no one-hour price');
    const minimum = BigInt(integer(data.minimum_order_energy, 'minimum order'));
    const ordered = energy > minimum ? energy : minimum;
    const priceSun = BigInt(integer(tier.price, 'price'));
    // A small order pays small_addition TRX on top (index-data.html).
    const addition =
      ordered < BigInt(integer(data.small_amount, 'small order size'))
        ? BigInt(Math.round(data.small_addition * SUN_PER_TRX))
        : 0n;
    return { energy: ordered, priceSun: ordered * priceSun + addition };
  };

  return {
    name: 'itrx',
    quote,
    async rent(order) {
      const body = itrxCanonicalJson({
        energy_amount: Number(order.energy),
        out_trade_no: order.reference,
        period: ONE_HOUR_ORDER_PERIOD,
        receive_address: order.address,
      });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const answer = await call('/api/v1/frontend/order', {
        method: 'POST',
        body,
        headers: {
          'Content-Type': 'application/json',
          TIMESTAMP: timestamp,
          SIGNATURE: itrxSignature(settings.apiSecret, timestamp, body),
        },
      });
      if (errno(answer) !== 0)
        throw new EnergyProviderError(`itrx refused the order (errno ${errno(answer)}): ${String(answer['message'])}`);
      if (typeof answer['serial'] !== 'string')
        throw new EnergyProviderError('itrx answered an order without a serial');
      return {
        orderId: answer['serial'],
        status: 'pending',
        priceSun: BigInt(integer(answer['amount'], 'order cost')),
      };
    },
    async order(reference): Promise<RentalOrder | null> {
      const answer = await call(`/api/v1/frontend/order/query?out_trade_no=${encodeURIComponent(reference)}`);
      if (errno(answer) === 404) return null;
      if (errno(answer) !== 0)
        throw new EnergyProviderError(`itrx could not say how an order stands (errno ${errno(answer)})`);
      return {
        orderId: String(answer['order_no']),
        status: itrxOrderStatus(integer(answer['status'], 'order status')),
        priceSun: BigInt(integer(answer['amount'], 'order cost')),
      };
    },
  };
}
