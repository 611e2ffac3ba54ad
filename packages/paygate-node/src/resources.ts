// The SDK's methods, one per operation of the OpenAPI document, grouped as the
// API's paths are (`paygate.crypto.payouts.create`). OPERATIONS maps each
// operationId to its method and path; `satisfies` makes a new operation in the
// regenerated types a compile error until it is listed here.
import type { HttpClient } from './http-client.ts';
import { sseEvents, type EventStreamOptions, type StreamedWebhookEvent } from './event-stream.ts';
import { PageList, type Page } from './pagination.ts';
import type { BodyOf, ItemOf, OperationId, QueryOf, RequestOptions, ResponseOf } from './types.ts';

const OPERATIONS = {
  getAccount: ['GET', '/v1/account'],
  createPayment: ['POST', '/v1/payments'],
  listPayments: ['GET', '/v1/payments'],
  getPayment: ['GET', '/v1/payments/{payment_id}'],
  createPaymentRefund: ['POST', '/v1/payments/{payment_id}/refunds'],
  listPaymentRefunds: ['GET', '/v1/payments/{payment_id}/refunds'],
  getPaymentRefund: ['GET', '/v1/payments/{payment_id}/refunds/{refund_id}'],
  testHelpersPayPayment: ['POST', '/v1/test_helpers/payments/{payment_id}/pay'],
  testHelpersFailPayment: ['POST', '/v1/test_helpers/payments/{payment_id}/fail'],
  testHelpersExpirePayment: ['POST', '/v1/test_helpers/payments/{payment_id}/expire'],
  listWebhookEvents: ['GET', '/v1/webhooks/events'],
  getWebhookEvent: ['GET', '/v1/webhooks/events/{event_id}'],
  listWebhookAttempts: ['GET', '/v1/webhooks/events/{event_id}/attempts'],
  resendWebhookEvent: ['POST', '/v1/webhooks/events/{event_id}/resend'],
  rotateWebhookSecret: ['POST', '/v1/webhooks/secret/rotate'],
  getWebhookEndpoint: ['GET', '/v1/webhooks/endpoint'],
  setWebhookEndpoint: ['PUT', '/v1/webhooks/endpoint'],
  sendTestWebhook: ['POST', '/v1/webhooks/test'],
  streamWebhookEvents: ['GET', '/v1/webhooks/stream'],
  getBalance: ['GET', '/v1/crypto/balance'],
  createBalanceTransfer: ['POST', '/v1/crypto/balance/transfers'],
  listBalanceOperations: ['GET', '/v1/crypto/balance/operations'],
  createCryptoInvoice: ['POST', '/v1/crypto/invoices'],
  listCryptoInvoices: ['GET', '/v1/crypto/invoices'],
  getCryptoInvoice: ['GET', '/v1/crypto/invoices/{invoice_id}'],
  getCryptoInvoiceQr: ['GET', '/v1/crypto/invoices/{invoice_id}/qr.svg'],
  createCryptoWallet: ['POST', '/v1/crypto/wallets'],
  listCryptoWallets: ['GET', '/v1/crypto/wallets'],
  getCryptoWallet: ['GET', '/v1/crypto/wallets/{wallet_id}'],
  blockCryptoWallet: ['POST', '/v1/crypto/wallets/{wallet_id}/block'],
  unblockCryptoWallet: ['POST', '/v1/crypto/wallets/{wallet_id}/unblock'],
  testHelpersCryptoDeposit: ['POST', '/v1/test_helpers/crypto/deposits'],
  testHelpersCryptoMineBlocks: ['POST', '/v1/test_helpers/crypto/blocks'],
  testHelpersCryptoReorg: ['POST', '/v1/test_helpers/crypto/reorg'],
  testHelpersCryptoNextTransferOutcome: ['POST', '/v1/test_helpers/crypto/next_transfer_outcome'],
  testHelpersCryptoDrainHotWalletTrx: ['POST', '/v1/test_helpers/crypto/hot_wallet/drain_trx'],
  testHelpersCryptoFaucet: ['POST', '/v1/test_helpers/crypto/faucet'],
  testHelpersCryptoBlacklist: ['POST', '/v1/test_helpers/crypto/blacklist'],
  testHelpersCryptoExpireInvoice: ['POST', '/v1/test_helpers/crypto/invoices/{invoice_id}/expire'],
  testHelpersCryptoWithdrawal: ['POST', '/v1/test_helpers/crypto/withdrawals'],
  createCryptoPayout: ['POST', '/v1/crypto/payouts'],
  listCryptoPayouts: ['GET', '/v1/crypto/payouts'],
  quoteCryptoPayout: ['POST', '/v1/crypto/payouts/quote'],
  createCryptoPayoutBatch: ['POST', '/v1/crypto/payouts/batch'],
  getCryptoPayoutBatch: ['GET', '/v1/crypto/payouts/batch/{batch_id}'],
  getCryptoPayout: ['GET', '/v1/crypto/payouts/{payout_id}'],
  createCryptoRefund: ['POST', '/v1/crypto/refunds'],
  getCryptoRefund: ['GET', '/v1/crypto/refunds/{refund_id}'],
} as const satisfies Record<OperationId, readonly ['GET' | 'POST' | 'PUT', string]>;

/** A method of the SDK, tagged with the operation it calls. */
export type Method<F> = F & { readonly operationId: OperationId };

function tagged<F extends (...args: never[]) => unknown>(operationId: OperationId, method: F): Method<F> {
  return Object.assign(method, { operationId });
}

/** The path parameters' names in order, `{payment_id}/refunds/{refund_id}` → payment_id, refund_id. */
function pathParamsOf(operationId: OperationId): string[] {
  const names = [...OPERATIONS[operationId][1].matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  if (names.length === 0) throw new Error(`${operationId} has no path parameter`);
  return names;
}

/** Makes the methods of each shape of operation on one client. */
function methodsOf(client: HttpClient) {
  const send = <Op extends OperationId>(
    operationId: Op,
    parts: { id?: string | readonly string[]; body?: unknown; query?: object; options?: RequestOptions },
  ): Promise<ResponseOf<Op>> => {
    const [method, path] = OPERATIONS[operationId];
    const ids = parts.id === undefined ? [] : typeof parts.id === 'string' ? [parts.id] : parts.id;
    const pathParams =
      ids.length === 0
        ? undefined
        : Object.fromEntries(pathParamsOf(operationId).map((name, index) => [name, ids[index] ?? '']));
    return client.request({ method, path, pathParams, query: parts.query, body: parts.body, options: parts.options });
  };
  const pages = <Op extends OperationId>(operationId: Op, id: string | undefined, query: object | undefined) =>
    new PageList<ItemOf<Op>>(
      (cursor) =>
        send(operationId, { id, query: cursor === undefined ? query : { ...query, cursor } }) as Promise<
          Page<ItemOf<Op>>
        >,
    );
  return {
    /** No parameters: `retrieve()`. */
    plain: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (options?: RequestOptions) => send(operationId, { options })),
    /** A JSON body: `create(body)`. */
    withBody: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (body: BodyOf<Op>, options?: RequestOptions) => send(operationId, { body, options })),
    /** An optional JSON body: `rotateSecret()`. */
    withOptionalBody: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (body?: BodyOf<Op>, options?: RequestOptions) => send(operationId, { body, options })),
    /** One path parameter: `retrieve(id)`, `pay(id)`. */
    byId: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (id: string, options?: RequestOptions) => send(operationId, { id, options })),
    /** Two path parameters: `retrieveRefund(paymentId, refundId)`. */
    byTwoIds: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (id: string, subId: string, options?: RequestOptions) =>
        send(operationId, { id: [id, subId], options }),
      ),
    /** One path parameter and an optional JSON body: `block(id, {reason})`. */
    byIdWithBody: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (id: string, body?: BodyOf<Op>, options?: RequestOptions) =>
        send(operationId, { id, body, options }),
      ),
    /** A list: `list(query)` iterates every item of every page. */
    list: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (query?: QueryOf<Op>) => pages(operationId, undefined, query)),
    /**
     * An endless stream of events: `for await (const event of await stream({ types, lastEventId, signal }))`.
     * Resolves once the gateway has opened it (events committed from then on are in it).
     */
    eventStream: (operationId: 'streamWebhookEvents') =>
      tagged(operationId, async (options: EventStreamOptions = {}): Promise<AsyncGenerator<StreamedWebhookEvent>> => {
        const [, path] = OPERATIONS[operationId];
        const body = await client.openStream(
          {
            method: 'GET',
            path,
            query: options.types ? { types: options.types.join(',') } : undefined,
            options: options.signal ? { signal: options.signal } : undefined,
          },
          options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId },
        );
        return sseEvents(body);
      }),
    /** A list under one resource: `listAttempts(id, query)`. */
    listById: <Op extends OperationId>(operationId: Op) =>
      tagged(operationId, (id: string, query?: QueryOf<Op>) => pages(operationId, id, query)),
  };
}

/** Every resource of the API on one client. */
export function createResources(client: HttpClient) {
  const m = methodsOf(client);
  return {
    account: { retrieve: m.plain('getAccount') },
    payments: {
      create: m.withBody('createPayment'),
      retrieve: m.byId('getPayment'),
      list: m.list('listPayments'),
      /** Refunds a paid payment in full (no body) or in part (`{amount}`). */
      refund: m.byIdWithBody('createPaymentRefund'),
      /** A payment's refunds (at most 100: one answer, with the refunded and refundable totals). */
      listRefunds: m.byId('listPaymentRefunds'),
      retrieveRefund: m.byTwoIds('getPaymentRefund'),
    },
    webhookEvents: {
      list: m.list('listWebhookEvents'),
      retrieve: m.byId('getWebhookEvent'),
      listAttempts: m.listById('listWebhookAttempts'),
      resend: m.byId('resendWebhookEvent'),
      /** The shop's events as they commit (Server-Sent Events); needs the webhooks scope. */
      stream: m.eventStream('streamWebhookEvents'),
    },
    webhookEndpoint: {
      retrieve: m.plain('getWebhookEndpoint'),
      update: m.withBody('setWebhookEndpoint'),
      rotateSecret: m.withOptionalBody('rotateWebhookSecret'),
      sendTest: m.withOptionalBody('sendTestWebhook'),
    },
    crypto: {
      balance: {
        retrieve: m.plain('getBalance'),
        transfer: m.withBody('createBalanceTransfer'),
        listOperations: m.list('listBalanceOperations'),
      },
      invoices: {
        create: m.withBody('createCryptoInvoice'),
        retrieve: m.byId('getCryptoInvoice'),
        list: m.list('listCryptoInvoices'),
        qrSvg: m.byId('getCryptoInvoiceQr'),
      },
      wallets: {
        create: m.withBody('createCryptoWallet'),
        retrieve: m.byId('getCryptoWallet'),
        list: m.list('listCryptoWallets'),
        block: m.byIdWithBody('blockCryptoWallet'),
        unblock: m.byIdWithBody('unblockCryptoWallet'),
      },
      payouts: {
        create: m.withBody('createCryptoPayout'),
        retrieve: m.byId('getCryptoPayout'),
        list: m.list('listCryptoPayouts'),
        quote: m.withBody('quoteCryptoPayout'),
        createBatch: m.withBody('createCryptoPayoutBatch'),
        retrieveBatch: m.byId('getCryptoPayoutBatch'),
      },
      refunds: {
        create: m.withBody('createCryptoRefund'),
        retrieve: m.byId('getCryptoRefund'),
      },
    },
    /** Sandbox shops only: move payments and the simulated chain. */
    testHelpers: {
      payments: {
        pay: m.byId('testHelpersPayPayment'),
        fail: m.byId('testHelpersFailPayment'),
        expire: m.byId('testHelpersExpirePayment'),
      },
      crypto: {
        deposit: m.withBody('testHelpersCryptoDeposit'),
        mineBlocks: m.withOptionalBody('testHelpersCryptoMineBlocks'),
        reorg: m.withOptionalBody('testHelpersCryptoReorg'),
        nextTransferOutcome: m.withBody('testHelpersCryptoNextTransferOutcome'),
        drainHotWalletTrx: m.withOptionalBody('testHelpersCryptoDrainHotWalletTrx'),
        faucet: m.withBody('testHelpersCryptoFaucet'),
        blacklist: m.withBody('testHelpersCryptoBlacklist'),
        expireInvoice: m.byId('testHelpersCryptoExpireInvoice'),
        withdrawal: m.withBody('testHelpersCryptoWithdrawal'),
      },
    },
  };
}
