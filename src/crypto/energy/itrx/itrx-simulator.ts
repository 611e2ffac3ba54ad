// A simulator of itrx.io's energy rental API (itrx-provider.ts lists what it
// follows) for tests and sandboxes: prices from index-data, orders checked for
// the API key and the HMAC signature, each order delegating the energy on the
// chain through `delegate` (the simulated chain's DelegateResource from the
// simulator's own stake) and completing (status 40) once that is done, or
// ending 43 when it fails. The account's balance pays for orders. State lives
// in memory.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  closeSimulatorServer,
  listenOn,
  readBody,
  sendJson,
} from '../../../payments/connectors/acquirer-simulator-http.ts';
import { tronAddress, type TronAddress } from '../../tron/address.ts';
import { itrxCanonicalJson, itrxSignature } from './itrx-provider.ts';

export interface ItrxSimulatorOptions {
  readonly port?: number;
  readonly apiKey: string;
  readonly apiSecret: string;
  /** Sun per energy of a one-hour rental. */
  readonly priceSunPerEnergy: number;
  readonly minimumOrderEnergy?: number;
  /** The account's prepaid balance, in sun. */
  readonly balanceSun: bigint;
  /** Puts `energy` on `address` for an hour; answers the delegation's txID. */
  readonly delegate: (address: TronAddress, energy: bigint) => Promise<string>;
}

interface SimulatedOrder {
  readonly serial: string;
  readonly outTradeNo: string | undefined;
  readonly receiveAddress: TronAddress;
  readonly energy: number;
  readonly amountSun: bigint;
  status: number;
  delegateHash: string | undefined;
  readonly createdAt: string;
}

export interface ItrxSimulator {
  readonly url: string;
  readonly orders: readonly SimulatedOrder[];
  balanceSun(): bigint;
  /** Settles once every order placed so far has delegated (or failed). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const SMALL_AMOUNT = 50_000;
const SMALL_ADDITION_TRX = 0.6;

export async function startItrxSimulator(options: ItrxSimulatorOptions): Promise<ItrxSimulator> {
  const minimum = options.minimumOrderEnergy ?? 32_000;
  const orders: SimulatedOrder[] = [];
  const delegations: Promise<void>[] = [];
  let balance = options.balanceSun;
  let serials = 0;

  const costOf = (energy: number): bigint =>
    BigInt(energy) * BigInt(options.priceSunPerEnergy) +
    (energy < SMALL_AMOUNT ? BigInt(Math.round(SMALL_ADDITION_TRX * 1_000_000)) : 0n);

  const indexData = () => ({
    platform_avail_energy: 100_000_000,
    platform_max_energy: 100_000_000,
    minimum_order_energy: minimum,
    maximum_order_energy: 100_000_000,
    small_amount: SMALL_AMOUNT,
    small_addition: SMALL_ADDITION_TRX,
    usdt_energy_need_old: 65_000,
    usdt_energy_need_new: 131_000,
    tiered_pricing: [
      { period: 0, price: options.priceSunPerEnergy },
      { period: 1, price: options.priceSunPerEnergy * 2 },
    ],
    balance: Number(balance),
  });

  const placeOrder = (request: IncomingMessage, body: string): Record<string, unknown> => {
    const timestamp = String(request.headers['timestamp'] ?? '');
    const signature = String(request.headers['signature'] ?? '');
    let parameters: Record<string, string | number>;
    try {
      parameters = JSON.parse(body) as Record<string, string | number>;
    } catch {
      return { errno: 400, message: 'invalid JSON' };
    }
    if (signature !== itrxSignature(options.apiSecret, timestamp, itrxCanonicalJson(parameters)))
      return { errno: 401, message: 'signature error' };
    const energy = Number(parameters['energy_amount']);
    if (!Number.isSafeInteger(energy) || energy < minimum) return { errno: 400, message: 'energy_amount too small' };
    if (parameters['period'] !== '1H' && !/^([1-9]|[12][0-9]|30)D$/.test(String(parameters['period'])))
      return { errno: 400, message: 'invalid period' };
    let receiveAddress: TronAddress;
    try {
      receiveAddress = tronAddress(String(parameters['receive_address']));
    } catch {
      return { errno: 400, message: 'invalid receive_address' };
    }
    const outTradeNo = parameters['out_trade_no'] === undefined ? undefined : String(parameters['out_trade_no']);
    if (outTradeNo !== undefined && orders.some((order) => order.outTradeNo === outTradeNo))
      return { errno: 409, message: 'duplicate out_trade_no' };
    const amountSun = costOf(energy);
    if (amountSun > balance) return { errno: 402, message: 'insufficient balance' };
    balance -= amountSun;
    serials += 1;
    const order: SimulatedOrder = {
      serial: serials.toString(16).padStart(32, '0'),
      outTradeNo,
      receiveAddress,
      energy,
      amountSun,
      status: 30,
      delegateHash: undefined,
      createdAt: new Date().toISOString(),
    };
    orders.push(order);
    delegations.push(
      options.delegate(receiveAddress, BigInt(energy)).then(
        (txId) => {
          order.delegateHash = txId;
          order.status = 40;
        },
        () => {
          order.status = 43;
          balance += amountSun;
        },
      ),
    );
    return { errno: 0, serial: order.serial, amount: Number(amountSun), balance: Number(balance) };
  };

  const queryOrder = (url: URL): Record<string, unknown> => {
    const serial = url.searchParams.get('serial');
    const outTradeNo = url.searchParams.get('out_trade_no');
    const order = orders.find((entry) =>
      serial !== null ? entry.serial === serial : outTradeNo !== null && entry.outTradeNo === outTradeNo,
    );
    if (!order) return { errno: 404, message: 'Order not found' };
    return {
      errno: 0,
      receive_address: order.receiveAddress,
      order_no: order.serial,
      energy_amount: order.energy,
      pay_amount: order.status === 40 ? order.energy : 0,
      amount: Number(order.amountSun),
      details: order.delegateHash
        ? [{ delegate_hash: order.delegateHash, delegate_time: order.createdAt, status: 20 }]
        : [],
      create_time: order.createdAt,
      api_name: 'paygate',
      period: 0,
      status: order.status,
      refund_amount: order.status === 43 ? Number(order.amountSun) : 0,
    };
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://simulator');
    const body = await readBody(request);
    // itrx answers an unknown key with empty data (index-data.html); a refusal here keeps tests honest.
    if (request.headers['api-key'] !== options.apiKey)
      return sendJson(response, 200, { errno: 401, message: 'invalid API-KEY' });
    if (request.method === 'GET' && url.pathname === '/api/v1/frontend/index-data')
      return sendJson(response, 200, indexData());
    if (request.method === 'POST' && url.pathname === '/api/v1/frontend/order')
      return sendJson(response, 200, placeOrder(request, body));
    if (request.method === 'GET' && url.pathname === '/api/v1/frontend/order/query')
      return sendJson(response, 200, queryOrder(url));
    sendJson(response, 404, { errno: 404, message: 'not found' });
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => sendJson(response, 500, { errno: 500, message: 'internal error' }));
  });
  const url = await listenOn(server, options.port ?? 0);
  return {
    url,
    orders,
    balanceSun: () => balance,
    settled: async () => {
      await Promise.all(delegations);
    },
    close: () => closeSimulatorServer(server, new Set()),
  };
}
