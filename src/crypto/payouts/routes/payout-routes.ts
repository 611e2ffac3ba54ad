// /v1/crypto/payouts: create (idempotent by external_id), quote, read, list, and
// batch payouts. Thin: schema, scope, call the services.
import { Type } from 'typebox';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import { principalOf, type ApiPrincipal } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { PageQuery, pageOf } from '../../receiving/routes/crypto-schemas.ts';
import { createBatch, getBatch } from '../batch-service.ts';
import {
  createPayout,
  getPayout,
  listPayouts,
  quotePayout,
  type PayoutDeps,
  type PayoutShop,
} from '../payout-service.ts';
import {
  BATCH_ITEMS_MAX,
  Batch,
  BatchParams,
  EXTERNAL_ID_MAX_LENGTH,
  PAYOUT_EXAMPLE,
  Payout,
  PayoutAmountInput,
  PayoutExternalId,
  PayoutNetworkInput,
  PayoutParams,
  PayoutStatus,
  Quote,
  RecipientInput,
} from './payout-schemas.ts';
import { listRouteOptions, pageRequest } from '../../../http/page-request.ts';

const CreatePayoutBody = Type.Object(
  { external_id: PayoutExternalId, network: PayoutNetworkInput, amount: PayoutAmountInput, address: RecipientInput },
  {
    additionalProperties: false,
    examples: [
      { external_id: 'payout-42', network: 'TRC20', amount: '100.00', address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' },
    ],
  },
);

const QuoteBody = Type.Object(
  { network: PayoutNetworkInput, amount: PayoutAmountInput, address: RecipientInput },
  {
    additionalProperties: false,
    examples: [{ network: 'TRC20', amount: '100.00', address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' }],
  },
);

const BatchItem = Type.Object(
  { external_id: PayoutExternalId, amount: PayoutAmountInput, address: RecipientInput },
  { additionalProperties: false },
);
const CreateBatchBody = Type.Object(
  {
    external_id: Type.String({
      minLength: 1,
      maxLength: EXTERNAL_ID_MAX_LENGTH,
      description: 'your id of the batch (1 to 100 characters); the idempotency key',
    }),
    network: PayoutNetworkInput,
    payouts: Type.Array(BatchItem, {
      minItems: 1,
      maxItems: BATCH_ITEMS_MAX,
      description: `1 to ${BATCH_ITEMS_MAX} payouts; their external_ids unique within the batch and unused by the shop’s other payouts`,
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        external_id: 'batch-7',
        network: 'TRC20',
        payouts: [{ external_id: 'payout-43', amount: '100', address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf' }],
      },
    ],
  },
);

const ListPayoutsQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(PayoutStatus),
    external_id: Type.Optional(Type.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX_LENGTH })),
  },
  { additionalProperties: false },
);

const CREATE_ERRORS = [
  ...AUTHENTICATED_ROUTE_ERRORS,
  'forbidden',
  ...REQUEST_BODY_ERRORS,
  'amount_not_supported',
  'insufficient_funds',
  'duplicate_external_id',
  'address_blacklisted',
] as const;

function shopOf(principal: ApiPrincipal): PayoutShop {
  return { shopId: principal.shopId, merchantId: principal.merchantId, mode: principal.shopMode };
}

export const payoutRoutes =
  (deps: PayoutDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/crypto/payouts',
      {
        config: { scopes: ['payouts'] },
        schema: {
          operationId: 'createCryptoPayout',
          tags: ['crypto payouts'],
          summary:
            'Send USDT from the balance to an address (idempotent by external_id; Idempotency-Key is accepted and not needed)',
          body: CreatePayoutBody,
          response: {
            200: {
              ...Payout,
              description: 'The payout created earlier with this external_id and the same parameters, as it is now',
            },
            201: { ...Payout, description: 'The payout, accepted now with total_debit reserved' },
            ...errorResponses(...CREATE_ERRORS),
          },
        },
      },
      async (request, reply) => {
        const result = await createPayout(deps, shopOf(principalOf(request)), request.body);
        return reply.code(result.created ? 201 : 200).send(result.payout);
      },
    );

    app.post(
      '/crypto/payouts/quote',
      {
        config: { scopes: ['payouts'] },
        schema: {
          operationId: 'quoteCryptoPayout',
          tags: ['crypto payouts'],
          summary: 'The fees and total debit a payout would have now; creates nothing',
          body: QuoteBody,
          response: {
            200: Quote,
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'amount_not_supported',
              'address_blacklisted',
            ),
          },
        },
      },
      async (request) => quotePayout(deps, shopOf(principalOf(request)), request.body),
    );

    app.post(
      '/crypto/payouts/batch',
      {
        config: { scopes: ['payouts'] },
        schema: {
          operationId: 'createCryptoPayoutBatch',
          tags: ['crypto payouts'],
          summary: 'Send up to 500 payouts at once, accepted whole or not at all (idempotent by external_id)',
          body: CreateBatchBody,
          response: {
            200: {
              ...Batch,
              description: 'The batch created earlier with this external_id and the same items, as it is now',
            },
            201: { ...Batch, description: 'The batch, accepted now with every item’s total_debit reserved' },
            ...errorResponses(...CREATE_ERRORS),
          },
        },
      },
      async (request, reply) => {
        const result = await createBatch(deps, shopOf(principalOf(request)), request.body);
        return reply.code(result.created ? 201 : 200).send(result.batch);
      },
    );

    app.get(
      '/crypto/payouts/batch/:batch_id',
      {
        config: { scopes: ['read', 'payouts'] },
        schema: {
          operationId: 'getCryptoPayoutBatch',
          tags: ['crypto payouts'],
          summary: 'Get a batch payout with its items and counts per state',
          params: BatchParams,
          response: { 200: Batch, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'not_found') },
        },
      },
      async (request) => getBatch(deps, principalOf(request).shopId, request.params.batch_id),
    );

    app.get(
      '/crypto/payouts/:payout_id',
      {
        config: { scopes: ['read', 'payouts'] },
        schema: {
          operationId: 'getCryptoPayout',
          tags: ['crypto payouts'],
          summary: 'Get a payout',
          params: PayoutParams,
          response: { 200: Payout, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'not_found') },
        },
      },
      async (request) => getPayout(deps, principalOf(request).shopId, request.params.payout_id),
    );

    app.get(
      '/crypto/payouts',
      listRouteOptions({
        scopes: ['read', 'payouts'],
        operationId: 'listCryptoPayouts',
        tag: 'crypto payouts',
        summary: 'List payouts (batch items included), newest first',
        querystring: ListPayoutsQuery,
        page: pageOf(Payout, 'payouts', PAYOUT_EXAMPLE),
      }),
      async (request) =>
        listPayouts(deps, principalOf(request).shopId, {
          ...pageRequest(request.query),
          status: request.query.status,
          external_id: request.query.external_id,
        }),
    );
  };
