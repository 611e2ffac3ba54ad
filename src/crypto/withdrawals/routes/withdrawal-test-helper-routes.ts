// /v1/test_helpers/crypto/withdrawals: a sandbox shop's cabinet withdrawal, made
// without the cabinet. No API key reaches withdrawals otherwise (a merchant's
// people ask for them in the cabinet, a second person approves), so a developer
// testing their cabinet.withdrawal.completed handler could not make one from a
// script. The helper asks for it and approves it through the real withdrawal
// service, under two test-helper names; the executor then sends it on the
// simulated chain like any other. On a live shop the route answers 404.
import { Type } from 'typebox';
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import { PayoutAmountInput, PayoutExternalId, RecipientInput } from '../../payouts/routes/payout-schemas.ts';
import { requestSandboxWithdrawal } from '../withdrawal-test-helper.ts';

const Usdt = (description: string) =>
  Type.String({ description: `${description}; USDT as a decimal string with at most 6 places` });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const WITHDRAWAL_EXAMPLE = {
  withdrawal_id: 'wd_01jcx1a2b3c4d5e6f7g8h9j0k3',
  external_id: 'wd-42',
  merchant_id: 'mer_01jcx1a2b3c4d5e6f7g8h9j0k1',
  shop_id: 'shop_01jcx1a2b3c4d5e6f7g8h9j0k2',
  status: 'pending',
  network: 'TRC20',
  asset: 'USDT',
  recipient_address: 'TGkW6pNrnKo9TUc8GnyBo1zWUrsw7WX2e1',
  amount: '10',
  network_fee: '4.02',
  total_debit: '14.02',
  network_fee_actual: null,
  tx_hash: null,
  error: null,
  requested_by: 'test_helpers:requester',
  requested_by_user_id: null,
  note: null,
  decision: {
    by: 'test_helpers:approver',
    user_id: null,
    at: '2026-11-01T10:00:00.000Z',
    approved: true,
    reason: null,
  },
  created_at: '2026-11-01T10:00:00.000Z',
  completed_at: null,
};

const WithdrawalBody = Type.Object(
  {
    external_id: PayoutExternalId,
    amount: PayoutAmountInput,
    address: RecipientInput,
  },
  {
    additionalProperties: false,
    examples: [{ external_id: 'wd-42', amount: '10', address: WITHDRAWAL_EXAMPLE.recipient_address }],
  },
);

const Withdrawal = Type.Object(
  {
    withdrawal_id: Type.String(),
    external_id: Nullable(Type.String()),
    merchant_id: Type.String(),
    shop_id: Type.String(),
    status: Type.String({
      description: 'awaiting_approval, pending, processing, completed, failed, rejected or cancelled',
    }),
    network: Type.Literal('TRC20'),
    asset: Type.Literal('USDT'),
    recipient_address: Type.String(),
    amount: Usdt('what the address receives'),
    network_fee: Usdt('the network fee quoted at the request'),
    total_debit: Usdt('amount + network_fee; reserved at the request'),
    network_fee_actual: Nullable(Usdt('what the chain burned')),
    tx_hash: Nullable(Type.String()),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    requested_by: Type.String(),
    requested_by_user_id: Nullable(Type.String()),
    note: Nullable(Type.String()),
    decision: Nullable(
      Type.Object({
        by: Type.String(),
        user_id: Nullable(Type.String()),
        at: Type.String({ format: 'date-time' }),
        approved: Type.Boolean(),
        reason: Nullable(Type.String()),
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    completed_at: Nullable(Type.String({ format: 'date-time' })),
  },
  {
    description: 'The withdrawal as cabinet.withdrawal.completed carries it',
    examples: [WITHDRAWAL_EXAMPLE],
  },
);

export const withdrawalTestHelperRoutes =
  (deps: CryptoDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/test_helpers/crypto/withdrawals',
      {
        config: { scopes: ['payouts'] },
        schema: {
          operationId: 'testHelpersCryptoWithdrawal',
          tags: ['test helpers'],
          summary: 'Sandbox: withdraw USDT from the balance as the cabinet would, approved',
          description:
            'Only for sandbox shops; on a live shop the route answers 404. What a merchant’s people do in the cabinet (docs/refunds-and-withdrawals.md): `test_helpers:requester` asks for the withdrawal and, when the merchant’s rule wants a second person, `test_helpers:approver` approves it. total_debit is reserved; the executor sends it on the simulated chain; mine 19 blocks after its tx_hash appears and it completes with `cabinet.withdrawal.completed`. The same external_id with the same amount and address answers the same withdrawal (200); with others, 409 duplicate_external_id. Not enough available balance: insufficient_funds.',
          body: WithdrawalBody,
          response: {
            201: { ...Withdrawal, description: 'Requested (and approved when needed)' },
            200: { ...Withdrawal, description: 'The withdrawal an earlier call with this external_id made' },
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'not_found',
              'amount_not_supported',
              'duplicate_external_id',
              'insufficient_funds',
              'address_blacklisted',
            ),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await requestSandboxWithdrawal(
          deps,
          {
            merchantId: principal.merchantId,
            shopId: principal.shopId,
            mode: principal.shopMode,
            keyId: principal.keyId,
          },
          request.body,
        );
        return reply.code(result.created ? 201 : 200).send(result.withdrawal);
      },
    );
  };
