// /v1/crypto/balance: balances, transfers between the merchant's own accounts,
// and the operation history. Thin: schema, scope, call balance-service.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/authentication.ts';
import { EXTERNAL_ID_MAX_LENGTH, OPERATION_TYPES, createInternalTransfer, getBalances, listMerchantOperations } from './balance-service.ts';

const Currency = Type.Union([Type.Literal('RUB'), Type.Literal('USDT')]);
const Money = Type.String({ description: 'decimal string: 2 places for RUB, 6 for USDT' });
const ErrorBody = Type.Object({ error: Type.String(), message: Type.String() });

const AccountBalance = Type.Object({
  account_id: Type.String(),
  currency: Currency,
  kind: Type.String({ description: 'main | payout' }),
  available: Money,
  pending: Type.String({ description: 'reserved for pending outgoing transfers (payouts)' }),
  total: Type.String({ description: 'available + pending' }),
});

const TransferBody = Type.Object(
  {
    external_id: Type.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX_LENGTH, description: 'your id of this transfer; the idempotency key' }),
    from_account_id: Type.String({ minLength: 1, maxLength: 64 }),
    to_account_id: Type.String({ minLength: 1, maxLength: 64 }),
    amount: Type.String({ minLength: 1, maxLength: 40, description: 'decimal string > 0: at most 2 places for RUB, 6 for USDT' }),
  },
  { additionalProperties: false },
);

const Transfer = Type.Object({
  transfer_id: Type.String(),
  external_id: Type.String(),
  from_account_id: Type.String(),
  to_account_id: Type.String(),
  amount: Money,
  currency: Currency,
  status: Type.String(),
  created_at: Type.String(),
});

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
  created_at: Type.String(),
});

export const balanceRoutes: FastifyPluginAsyncTypebox<{ context: AppContext }> = async (app, { context }) => {
  app.get(
    '/crypto/balance',
    {
      config: { scopes: ['read', 'crypto', 'payouts', 'payments'] },
      schema: { tags: ['balance'], summary: 'Balances of the merchant’s accounts', response: { 200: Type.Object({ accounts: Type.Array(AccountBalance) }) } },
    },
    async (request) => getBalances(context, principalOf(request).merchantId),
  );

  app.post(
    '/crypto/balance/transfers',
    {
      config: { scopes: ['crypto', 'payouts'] },
      schema: {
        tags: ['balance'],
        summary: 'Move money between two of the merchant’s accounts of one currency (idempotent by external_id)',
        body: TransferBody,
        response: { 200: Transfer, 201: Transfer, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const result = await createInternalTransfer(context, principalOf(request).merchantId, request.body);
      return reply.code(result.created ? 201 : 200).send(result.transfer);
    },
  );

  app.get(
    '/crypto/balance/operations',
    {
      config: { scopes: ['read', 'crypto', 'payouts', 'payments'] },
      schema: {
        tags: ['balance'],
        summary: 'Operation history of the merchant’s accounts, newest first',
        querystring: OperationsQuery,
        response: { 200: Type.Object({ data: Type.Array(Operation), next_cursor: Type.Union([Type.String(), Type.Null()]) }), 404: ErrorBody },
      },
    },
    async (request) =>
      listMerchantOperations(context, principalOf(request).merchantId, {
        limit: request.query.limit ?? 20,
        cursor: request.query.cursor,
        accountId: request.query.account_id,
        type: request.query.type,
        from: request.query.from,
        to: request.query.to,
      }),
  );
};
