// /v1/payments and the sandbox test helpers: schema, scope, call the service.
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { ConnectorDeps } from './connectors/connector-registry.ts';
import type { ModuleRoutes } from '../gateway-module.ts';
import type { MethodSettingsSource } from './method-settings-cache.ts';
import { principalOf } from '../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../http/error-responses.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../idempotency/idempotency-service.ts';
import {
  CALLBACK_URL_MAX_LENGTH,
  ORDER_ID_MAX_LENGTH,
  createPayment,
  getPayment,
  listPaymentsOfShop,
  runTestHelper,
} from './payment-service.ts';
import { PAYMENT_METHODS } from './payment-tables.ts';
import { listRouteOptions, pageRequest } from '../http/page-request.ts';

const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('paid'),
  Type.Literal('failed'),
  Type.Literal('expired'),
]);
const Method = Type.Union([Type.Literal('card'), Type.Literal('sbp'), Type.Literal('sberpay')]);

const CreatePaymentBody = Type.Object(
  {
    amount: Type.Number({ description: 'RUB, 1 to 1 000 000, at most 2 decimal places' }),
    currency: Type.String({ maxLength: 16, description: 'RUB' }),
    method: Type.Optional(
      Type.Union([Type.String({ maxLength: 32 }), Type.Null()], { description: PAYMENT_METHODS.join(' | ') }),
    ),
    callback_url: Type.Optional(Type.Union([Type.String({ maxLength: CALLBACK_URL_MAX_LENGTH }), Type.Null()])),
    order_id: Type.Optional(Type.Union([Type.String({ maxLength: ORDER_ID_MAX_LENGTH }), Type.Null()])),
  },
  {
    additionalProperties: false,
    examples: [
      {
        amount: 1500.5,
        currency: 'RUB',
        method: 'card',
        callback_url: 'https://shop.example.com/paygate/webhooks',
        order_id: 'order-42',
      },
    ],
  },
);

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      description:
        'Repeating the request with the same key and body within 24 h returns the same payment instead of a second one.',
    }),
  ),
});

const PAYMENT_EXAMPLE = {
  payment_id: '0195f3b2-8c1e-7d4a-9b61-2f0c7e5a1d34',
  order_code: 'AHpzknfdgG',
  payment_url: 'https://pay.example.com/pay/AHpzknfdgG',
  status: 'pending',
  amount: 1500.5,
  amount_total: 1530.51,
  currency: 'RUB',
  method: 'card',
  order_id: 'order-42',
  created_at: '2026-11-01T10:00:00.000Z',
  paid_at: null,
  expires_at: '2026-11-01T10:30:00.000Z',
};

const Payment = Type.Object(
  {
    payment_id: Type.String({ format: 'uuid' }),
    order_code: Type.String({ description: 'The code in payment_url' }),
    payment_url: Type.String({ description: 'The hosted payment page to send the payer to' }),
    status: Status,
    amount: Type.Number({ description: 'RUB the merchant is credited when paid' }),
    amount_total: Type.Number({ description: 'RUB the payer pays: amount plus the payer fee of the method' }),
    currency: Type.Literal('RUB'),
    method: Type.Union([Method, Type.Null()]),
    order_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { description: 'The payment', examples: [PAYMENT_EXAMPLE] },
);

const PaymentList = Type.Object(
  { data: Type.Array(Payment), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  {
    description: 'A page of payments, newest first; pass next_cursor as cursor for the next page',
    examples: [{ data: [PAYMENT_EXAMPLE], next_cursor: null }],
  },
);

const PaymentParams = Type.Object({
  payment_id: Type.String({ maxLength: 64, description: 'The payment_id of a payment of this shop' }),
});

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Status),
    order_id: Type.Optional(Type.String({ maxLength: ORDER_ID_MAX_LENGTH })),
  },
  { additionalProperties: false },
);

/** The sandbox test helpers, each driving a pending payment as the acquirer or the clock would. */
const TEST_HELPERS = [
  {
    action: 'pay',
    operationId: 'testHelpersPayPayment',
    summary: 'Sandbox: mark a pending payment paid, as the acquirer would',
  },
  {
    action: 'fail',
    operationId: 'testHelpersFailPayment',
    summary: 'Sandbox: mark a pending payment failed, as the acquirer would',
  },
  {
    action: 'expire',
    operationId: 'testHelpersExpirePayment',
    summary: 'Sandbox: expire a pending payment, as the clock would',
  },
] as const;

/** The deps of the payment routes; `methodSettings` is the module's cache (closed with the module). */
export type PaymentRouteDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'keyring'> &
  Pick<ConnectorDeps, 'keyring' | 'acquirerProviders'> & {
    readonly methodSettings: MethodSettingsSource;
  };

export const paymentRoutes =
  (context: PaymentRouteDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/payments',
      {
        config: { scopes: ['payments'] },
        schema: {
          operationId: 'createPayment',
          tags: ['payments'],
          summary: 'Create a one-time RUB payment',
          body: CreatePaymentBody,
          headers: IdempotencyHeaders,
          response: {
            201: Payment,
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'amount_not_supported',
              'method_unavailable',
              'duplicate_external_id',
              'idempotency_in_progress',
            ),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await createPayment(
          context,
          { shopId: principal.shopId, mode: principal.shopMode },
          request.body,
          request.headers['idempotency-key'],
        );
        // The stored bytes are sent as they are, so a replay is byte-identical.
        return reply
          .code(result.status as 201)
          .type('application/json; charset=utf-8')
          .serializer((payload) => payload as string)
          .send(result.body as never);
      },
    );

    app.get(
      '/payments/:payment_id',
      {
        config: { scopes: ['read', 'payments'] },
        schema: {
          operationId: 'getPayment',
          tags: ['payments'],
          summary: 'Get a payment',
          params: PaymentParams,
          response: {
            200: Payment,
            ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'invalid_request', 'not_found'),
          },
        },
      },
      async (request) => getPayment(context, principalOf(request).shopId, request.params.payment_id),
    );

    app.get(
      '/payments',
      listRouteOptions({
        scopes: ['read', 'payments'],
        operationId: 'listPayments',
        tag: 'payments',
        summary: 'List payments, newest first',
        querystring: ListQuery,
        page: PaymentList,
        errors: ['invalid_request'],
      }),
      async (request) =>
        listPaymentsOfShop(context, principalOf(request).shopId, {
          ...pageRequest(request.query),
          status: request.query.status,
          orderId: request.query.order_id,
        }),
    );

    for (const { action, operationId, summary } of TEST_HELPERS) {
      app.post(
        `/test_helpers/payments/:payment_id/${action}`,
        {
          config: { scopes: ['payments'] },
          schema: {
            operationId,
            tags: ['test helpers'],
            summary,
            description:
              'Only for payments of a sandbox shop; on a live shop the route answers 404. A payment that is no longer pending answers 409 invalid_state.',
            params: PaymentParams,
            response: {
              200: Payment,
              ...errorResponses(
                ...AUTHENTICATED_ROUTE_ERRORS,
                'forbidden',
                ...REQUEST_BODY_ERRORS,
                'not_found',
                'invalid_state',
              ),
            },
          },
        },
        async (request) => {
          const principal = principalOf(request);
          return runTestHelper(
            context,
            { shopId: principal.shopId, mode: principal.shopMode },
            request.params.payment_id,
            action,
          );
        },
      );
    }
  };
