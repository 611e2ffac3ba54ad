// /v1/crypto/balance: balances, transfers between the merchant's own accounts,
// and the operation history. Thin: schema, scope, call balance-service.
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ModuleRoutes } from '../gateway-module.ts';
import { principalOf } from '../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../http/error-responses.ts';
import {
  EXTERNAL_ID_MAX_LENGTH,
  OPERATION_TYPES,
  createInternalTransfer,
  getBalances,
  listMerchantOperations,
  type BalanceDeps,
  type LedgerOwner,
} from './balance-service.ts';
import { listRouteOptions, pageRequest } from '../http/page-request.ts';

const Currency = Type.Union([Type.Literal('RUB'), Type.Literal('USDT')]);
const Money = Type.String({ description: 'decimal string: 2 places for RUB, 6 for USDT' });
const RUB_MAIN_ACCOUNT = 'acc_01jcx0m8z4f6k2n9q3r5t7v8wa';
const RUB_PAYOUT_ACCOUNT = 'acc_01jcx0m8z4f6k2n9q3r5t7v8wb';

const AccountBalance = Type.Object({
  account_id: Type.String(),
  currency: Currency,
  kind: Type.String({ description: 'main | payout' }),
  available: Money,
  pending: Type.String({
    description: 'reserved for outgoing transfers (payouts) plus incoming credits not final yet (deposits confirming)',
  }),
  total: Type.String({ description: 'available + pending' }),
});

const Balances = Type.Object(
  { accounts: Type.Array(AccountBalance) },
  {
    description: 'Every account of the merchant, RUB first',
    examples: [
      {
        accounts: [
          {
            account_id: RUB_MAIN_ACCOUNT,
            currency: 'RUB',
            kind: 'main',
            available: '15005.00',
            pending: '0.00',
            total: '15005.00',
          },
          {
            account_id: RUB_PAYOUT_ACCOUNT,
            currency: 'RUB',
            kind: 'payout',
            available: '0.00',
            pending: '0.00',
            total: '0.00',
          },
        ],
      },
    ],
  },
);

const TransferBody = Type.Object(
  {
    external_id: Type.String({
      minLength: 1,
      maxLength: EXTERNAL_ID_MAX_LENGTH,
      description: 'your id of this transfer; the idempotency key',
    }),
    from_account_id: Type.String({ minLength: 1, maxLength: 64 }),
    to_account_id: Type.String({ minLength: 1, maxLength: 64 }),
    amount: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'decimal string > 0: at most 2 places for RUB, 6 for USDT',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        external_id: 'move-2026-11-01',
        from_account_id: RUB_MAIN_ACCOUNT,
        to_account_id: RUB_PAYOUT_ACCOUNT,
        amount: '5000.00',
      },
    ],
  },
);

const Transfer = Type.Object(
  {
    transfer_id: Type.String(),
    external_id: Type.String(),
    from_account_id: Type.String(),
    to_account_id: Type.String(),
    amount: Money,
    currency: Currency,
    status: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    examples: [
      {
        transfer_id: 'trf_01jcx1a2b3c4d5e6f7g8h9j0k1',
        external_id: 'move-2026-11-01',
        from_account_id: RUB_MAIN_ACCOUNT,
        to_account_id: RUB_PAYOUT_ACCOUNT,
        amount: '5000.00',
        currency: 'RUB',
        status: 'posted',
        created_at: '2026-11-01T10:00:00.000Z',
      },
    ],
  },
);

const OperationsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    account_id: Type.Optional(Type.String({ maxLength: 64 })),
    type: Type.Optional(Type.Union(OPERATION_TYPES.map((type) => Type.Literal(type)))),
    from: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601; entries at or after it' })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601; entries before it' })),
  },
  { additionalProperties: false },
);

const Operation = Type.Object({
  operation_id: Type.String(),
  account_id: Type.String(),
  transfer_id: Type.String(),
  type: Type.String(),
  amount: Type.String({ description: 'signed change of the account’s available balance' }),
  currency: Currency,
  status: Type.Union([Type.Literal('pending'), Type.Literal('posted'), Type.Literal('voided')]),
  balance_after: Money,
  reference: Type.Object({ type: Type.String(), id: Type.String() }),
  created_at: Type.String({ format: 'date-time' }),
});

const OperationList = Type.Object(
  { data: Type.Array(Operation), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  {
    description: 'A page of operations, newest first; pass next_cursor as cursor for the next page',
    examples: [
      {
        data: [
          {
            operation_id: 'op_01jcx1a2b3c4d5e6f7g8h9j0k2',
            account_id: RUB_MAIN_ACCOUNT,
            transfer_id: 'trf_01jcx1a2b3c4d5e6f7g8h9j0k1',
            type: 'transfer',
            amount: '-5000.00',
            currency: 'RUB',
            status: 'posted',
            balance_after: '10005.00',
            reference: { type: 'transfer', id: 'move-2026-11-01' },
            created_at: '2026-11-01T10:00:00.000Z',
          },
        ],
        next_cursor: null,
      },
    ],
  },
);

/** A key sees its merchant's money in the book of its shop's mode: sandbox keys sandbox money, live keys live money. */
function ledgerOwnerOf(request: FastifyRequest): LedgerOwner {
  const principal = principalOf(request);
  return { shopId: principal.shopId, merchantId: principal.merchantId, book: principal.shopMode };
}

export const balanceRoutes =
  (context: BalanceDeps): ModuleRoutes =>
  async (app) => {
    app.get(
      '/crypto/balance',
      {
        config: { scopes: ['read', 'crypto', 'payouts', 'payments'] },
        schema: {
          operationId: 'getBalance',
          tags: ['balance'],
          summary: 'Balances of the merchant’s accounts',
          // A key with only the webhooks scope may not read money.
          response: { 200: Balances, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden') },
        },
      },
      async (request) => getBalances(context, ledgerOwnerOf(request)),
    );

    app.post(
      '/crypto/balance/transfers',
      {
        config: { scopes: ['crypto', 'payouts'] },
        schema: {
          operationId: 'createBalanceTransfer',
          tags: ['balance'],
          summary: 'Move money between two of the merchant’s accounts of one currency (idempotent by external_id)',
          body: TransferBody,
          response: {
            200: {
              ...Transfer,
              description: 'The transfer made earlier with this external_id and the same parameters',
            },
            201: { ...Transfer, description: 'The transfer, made now' },
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'insufficient_funds',
              'not_found',
              'duplicate_external_id',
            ),
          },
        },
      },
      async (request, reply) => {
        const result = await createInternalTransfer(context, ledgerOwnerOf(request), request.body);
        return reply.code(result.created ? 201 : 200).send(result.transfer);
      },
    );

    app.get(
      '/crypto/balance/operations',
      listRouteOptions({
        scopes: ['read', 'crypto', 'payouts', 'payments'],
        operationId: 'listBalanceOperations',
        tag: 'balance',
        summary: 'Operation history of the merchant’s accounts, newest first',
        querystring: OperationsQuery,
        page: OperationList,
        errors: ['invalid_request', 'not_found'],
      }),
      async (request) =>
        listMerchantOperations(context, ledgerOwnerOf(request), {
          ...pageRequest(request.query),
          accountId: request.query.account_id,
          type: request.query.type,
          from: request.query.from,
          to: request.query.to,
        }),
    );
  };
