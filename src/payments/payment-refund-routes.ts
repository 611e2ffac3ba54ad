// /v1/payments/{payment_id}/refunds: a merchant's refunds of a paid RUB payment — schema, scope, call the service.
import { Type } from 'typebox';
import type { ModuleRoutes } from '../gateway-module.ts';
import { principalOf } from '../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../http/error-responses.ts';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../idempotency/idempotency-service.ts';
import {
  createPaymentRefund,
  getPaymentRefund,
  listPaymentRefunds,
  REFUND_REASON_MAX_LENGTH,
  REFUNDS_PER_PAYMENT_MAX,
  type PaymentRefundDeps,
} from './payment-refund-service.ts';

const REFUND_EXAMPLE = {
  refund_id: 'prf_01jcx1a2b3c4d5e6f7g8h9j0k7',
  payment_id: '0195f3b2-8c1e-7d4a-9b61-2f0c7e5a1d34',
  amount: 500.25,
  currency: 'RUB',
  status: 'succeeded',
  reason: 'returned goods',
  failure_reason: null,
  created_at: '2026-11-02T09:00:00.000Z',
  resolved_at: '2026-11-02T09:00:01.000Z',
};

const Refund = Type.Object(
  {
    refund_id: Type.String({ description: 'prf_…' }),
    payment_id: Type.String({ format: 'uuid' }),
    amount: Type.Number({ description: 'RUB returned to the payer and debited from the merchant’s RUB balance' }),
    currency: Type.Literal('RUB'),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description:
        'pending: the amount is reserved from the balance and the acquirer has not confirmed yet; succeeded: returned to the payer (payment.refunded); failed: the acquirer refused, the amount is available again',
    }),
    reason: Type.Union([Type.String(), Type.Null()]),
    failure_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the acquirer refused (failed only)' }),
    created_at: Type.String({ format: 'date-time' }),
    resolved_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { description: 'A refund of a RUB payment', examples: [REFUND_EXAMPLE] },
);

const RefundList = Type.Object(
  {
    data: Type.Array(Refund, {
      description: `The payment's refunds, oldest first (at most ${REFUNDS_PER_PAYMENT_MAX})`,
    }),
    amount_refunded: Type.Number({ description: 'RUB returned to the payer: the succeeded refunds' }),
    amount_refundable: Type.Number({
      description: 'RUB that may still be refunded: the payment’s amount less its pending and succeeded refunds',
    }),
  },
  {
    description: 'The refunds of a payment with its totals',
    examples: [{ data: [REFUND_EXAMPLE], amount_refunded: 500.25, amount_refundable: 1000.25 }],
  },
);

const CreateRefundBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Number({
        description:
          'RUB to return, 0.01 or more with at most 2 decimal places, up to what is left of the payment’s amount; absent: all that is left',
      }),
    ),
    reason: Type.Optional(Type.Union([Type.String({ maxLength: REFUND_REASON_MAX_LENGTH }), Type.Null()])),
  },
  { additionalProperties: false, examples: [{ amount: 500.25, reason: 'returned goods' }] },
);

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
      description:
        'Repeating the request with the same key and body within 24 h returns the same refund (200, as it is now) instead of a second one.',
    }),
  ),
});

const PaymentParams = Type.Object({
  payment_id: Type.String({ maxLength: 64, description: 'The payment_id of a payment of this shop' }),
});

const RefundParams = Type.Object({
  payment_id: Type.String({ maxLength: 64, description: 'The payment_id of a payment of this shop' }),
  refund_id: Type.String({ maxLength: 64, description: 'The refund_id of a refund of that payment' }),
});

export const paymentRefundRoutes =
  (deps: PaymentRefundDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/payments/:payment_id/refunds',
      {
        config: { scopes: ['payments'] },
        schema: {
          operationId: 'createPaymentRefund',
          tags: ['payments'],
          summary: 'Refund a paid payment, in full or in part',
          description:
            'Only a paid payment; the refunds of a payment never total more than its amount (the payer fee is not refunded). The amount is debited from the merchant’s RUB balance at once (reserved) and returned to the payer through the acquirer; payment.refunded is sent when the acquirer confirms.',
          params: PaymentParams,
          body: CreateRefundBody,
          headers: IdempotencyHeaders,
          response: {
            200: {
              ...Refund,
              description: 'The refund created earlier with this Idempotency-Key and body, as it is now',
            },
            201: { ...Refund, description: 'The refund, accepted now' },
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'not_found',
              'insufficient_funds',
              'invalid_state',
              'already_refunded',
              'duplicate_external_id',
              'idempotency_in_progress',
            ),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await createPaymentRefund(
          deps,
          { shopId: principal.shopId, mode: principal.shopMode },
          request.params.payment_id,
          request.body,
          request.headers['idempotency-key'],
        );
        return reply.code(result.created ? 201 : 200).send(result.refund);
      },
    );

    app.get(
      '/payments/:payment_id/refunds',
      {
        config: { scopes: ['read', 'payments'] },
        schema: {
          operationId: 'listPaymentRefunds',
          tags: ['payments'],
          summary: 'List the refunds of a payment',
          params: PaymentParams,
          response: {
            200: RefundList,
            ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'invalid_request', 'not_found'),
          },
        },
      },
      async (request) => listPaymentRefunds(deps, principalOf(request).shopId, request.params.payment_id),
    );

    app.get(
      '/payments/:payment_id/refunds/:refund_id',
      {
        config: { scopes: ['read', 'payments'] },
        schema: {
          operationId: 'getPaymentRefund',
          tags: ['payments'],
          summary: 'Get a refund of a payment',
          params: RefundParams,
          response: {
            200: Refund,
            ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'invalid_request', 'not_found'),
          },
        },
      },
      async (request) =>
        getPaymentRefund(deps, principalOf(request).shopId, request.params.payment_id, request.params.refund_id),
    );
  };
