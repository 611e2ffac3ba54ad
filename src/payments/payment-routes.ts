// /v1/payments and the sandbox test helpers: schema, scope, call the service.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/authentication.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency.ts';
import { CALLBACK_URL_MAX_LENGTH, ORDER_ID_MAX_LENGTH, createPayment, getPayment, listPaymentsOfShop, runTestHelper } from './payment-service.ts';
import { PAYMENT_METHODS } from './payment-tables.ts';

const Status = Type.Union([Type.Literal('pending'), Type.Literal('paid'), Type.Literal('failed'), Type.Literal('expired')]);
const Method = Type.Union([Type.Literal('card'), Type.Literal('sbp'), Type.Literal('sberpay')]);

const CreatePaymentBody = Type.Object(
  {
    amount: Type.Number({ description: 'RUB, 1 to 1 000 000, at most 2 decimal places' }),
    currency: Type.String({ maxLength: 16, description: 'RUB' }),
    method: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()], { description: PAYMENT_METHODS.join(' | ') })),
    callback_url: Type.Optional(Type.Union([Type.String({ maxLength: CALLBACK_URL_MAX_LENGTH }), Type.Null()])),
    order_id: Type.Optional(Type.Union([Type.String({ maxLength: ORDER_ID_MAX_LENGTH }), Type.Null()])),
  },
  { additionalProperties: false },
);

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH })),
});

const Payment = Type.Object({
  payment_id: Type.String({ format: 'uuid' }),
  order_code: Type.String(),
  payment_url: Type.String(),
  status: Status,
  amount: Type.Number(),
  amount_total: Type.Number(),
  currency: Type.Literal('RUB'),
  method: Type.Union([Method, Type.Null()]),
  order_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  paid_at: Type.Union([Type.String(), Type.Null()]),
  expires_at: Type.String(),
});

const PaymentParams = Type.Object({ payment_id: Type.String({ maxLength: 64 }) });

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Status),
    order_id: Type.Optional(Type.String({ maxLength: ORDER_ID_MAX_LENGTH })),
  },
  { additionalProperties: false },
);

const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() });

export const paymentRoutes: FastifyPluginAsyncTypebox<{ context: AppContext }> = async (app, { context }) => {
  app.post(
    '/payments',
    {
      config: { scopes: ['payments'] },
      schema: {
        tags: ['payments'],
        summary: 'Create a one-time RUB payment',
        body: CreatePaymentBody,
        headers: IdempotencyHeaders,
        response: { 201: Payment, 400: ErrorBody, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const result = await createPayment(context, principal.shopId, request.body, request.headers['idempotency-key']);
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
      schema: { tags: ['payments'], summary: 'Get a payment', params: PaymentParams, response: { 200: Payment, 404: ErrorBody } },
    },
    async (request) => getPayment(context, principalOf(request).shopId, request.params.payment_id),
  );

  app.get(
    '/payments',
    {
      config: { scopes: ['read', 'payments'] },
      schema: {
        tags: ['payments'],
        summary: 'List payments, newest first',
        querystring: ListQuery,
        response: { 200: Type.Object({ data: Type.Array(Payment), next_cursor: Type.Union([Type.String(), Type.Null()]) }) },
      },
    },
    async (request) =>
      listPaymentsOfShop(context, principalOf(request).shopId, {
        limit: request.query.limit ?? 20,
        cursor: request.query.cursor,
        status: request.query.status,
        orderId: request.query.order_id,
      }),
  );

  for (const action of ['pay', 'fail', 'expire'] as const) {
    app.post(
      `/test_helpers/payments/:payment_id/${action}`,
      {
        config: { scopes: ['payments'] },
        schema: {
          tags: ['test helpers'],
          summary: `Sandbox: ${action} a pending payment as the acquirer or the clock would`,
          params: PaymentParams,
          response: { 200: Payment, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        return runTestHelper(context, { shopId: principal.shopId, mode: principal.shopMode }, request.params.payment_id, action);
      },
    );
  }
};
