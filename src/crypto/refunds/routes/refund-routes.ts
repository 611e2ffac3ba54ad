// /v1/crypto/refunds: create (idempotent by external_id) and read. Thin: schema,
// scope, call the service. Scope `crypto`: a refund sends back what crypto
// receiving took in (API.md lists refunds under crypto receiving).
import { Type } from 'typebox';
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { RecipientInput } from '../../payouts/routes/payout-schemas.ts';
import { NETWORK_MODE, TRC20_USDT } from '../../receiving/routes/crypto-schemas.ts';
import { EXTERNAL_ID_MAX_LENGTH } from '../../payouts/payout-service.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import { createRefund, getRefund } from '../refund-service.ts';

const Usdt = (description: string) =>
  Type.String({ description: `${description}; USDT as a decimal string without trailing zeros` });
const Timestamp = Type.String({ format: 'date-time' });

const EXAMPLE = {
  refund_id: 'ref_01jcx1a2b3c4d5e6f7g8h9j0k5',
  external_id: 'refund-9',
  status: 'completed',
  deposit_id: 'dep_01jcx1a2b3c4d5e6f7g8h9j0k6',
  invoice_id: null,
  deposit_ids: ['dep_01jcx1a2b3c4d5e6f7g8h9j0k6'],
  held: false,
  network: 'TRC20',
  network_mode: 'mainnet',
  asset: 'USDT',
  recipient_address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
  received_amount: '25.5',
  recipient_amount: '22.79',
  network_fee: '2.71',
  network_fee_actual: '2.701',
  tx_hash: '9f2c7b1d4e8a3f6c0b5d2e9a7c1f4b8e3d6a0c9f2b5e8d1a4c7f0b3e6d9a2c5f',
  error: null,
  created_at: '2026-11-01T10:00:00.000Z',
  completed_at: '2026-11-01T10:01:00.000Z',
};

const Refund = Type.Object(
  {
    refund_id: Type.String(),
    external_id: Type.String({ description: 'your id of the refund; the idempotency key' }),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('processing'),
      Type.Literal('completed'),
      Type.Literal('failed'),
    ]),
    deposit_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the deposit asked for, or null for an invoice refund',
    }),
    invoice_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the invoice asked for, or null for a deposit refund',
    }),
    deposit_ids: Type.Array(Type.String(), {
      description: 'the deposits this refund sends back (an invoice refund: its credited deposits not refunded before)',
    }),
    held: Type.Boolean({
      description: 'the deposit was held (a blocked wallet, never credited): your balance is not touched',
    }),
    ...TRC20_USDT,
    ...NETWORK_MODE,
    recipient_address: Type.String(),
    received_amount: Usdt('what the deposits brought'),
    recipient_amount: Usdt('what the address receives: received_amount − network_fee'),
    network_fee: Usdt('the network fee quoted at acceptance, rounded up to the cent'),
    network_fee_actual: Type.Union([Usdt('what the chain actually burned, at the rate of the quote'), Type.Null()]),
    tx_hash: Type.Union([Type.String(), Type.Null()]),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: 'why a failed refund failed',
    }),
    created_at: Timestamp,
    completed_at: Type.Union([Timestamp, Type.Null()]),
  },
  { description: 'A refund of received USDT', examples: [EXAMPLE] },
);

const IdInput = (what: string) => Type.String({ minLength: 1, maxLength: 64, description: what });

const CreateRefundBody = Type.Object(
  {
    external_id: Type.String({
      minLength: 1,
      maxLength: EXTERNAL_ID_MAX_LENGTH,
      description: 'your id of the refund (1 to 100 characters); the idempotency key',
    }),
    deposit_id: Type.Optional(
      IdInput(
        'a final deposit (credited, or held at a blocked wallet) to send back; exactly one of deposit_id and invoice_id',
      ),
    ),
    invoice_id: Type.Optional(
      IdInput(
        'an invoice whose credited deposits to send back in one transfer; exactly one of deposit_id and invoice_id',
      ),
    ),
    address: RecipientInput,
  },
  {
    additionalProperties: false,
    examples: [
      {
        external_id: 'refund-9',
        deposit_id: 'dep_01jcx1a2b3c4d5e6f7g8h9j0k6',
        address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      },
    ],
  },
);

const RefundParams = Type.Object({
  refund_id: Type.String({ maxLength: 64, description: 'The refund_id of a refund of this shop' }),
});

export const refundRoutes =
  (deps: CryptoDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/crypto/refunds',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'createCryptoRefund',
          tags: ['crypto refunds'],
          summary:
            'Send a deposit (or an invoice’s credited deposits) back minus the network fee (idempotent by external_id)',
          body: CreateRefundBody,
          response: {
            200: {
              ...Refund,
              description: 'The refund created earlier with this external_id and the same parameters, as it is now',
            },
            201: { ...Refund, description: 'The refund, accepted now' },
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'not_found',
              'amount_not_supported',
              'insufficient_funds',
              'invalid_state',
              'already_refunded',
              'duplicate_external_id',
              'address_blacklisted',
            ),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await createRefund(
          deps,
          { shopId: principal.shopId, merchantId: principal.merchantId, mode: principal.shopMode },
          request.body,
        );
        return reply.code(result.created ? 201 : 200).send(result.refund);
      },
    );

    app.get(
      '/crypto/refunds/:refund_id',
      {
        config: { scopes: ['read', 'crypto'] },
        schema: {
          operationId: 'getCryptoRefund',
          tags: ['crypto refunds'],
          summary: 'Get a refund',
          params: RefundParams,
          response: { 200: Refund, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'not_found') },
        },
      },
      async (request) => getRefund(deps, principalOf(request).shopId, request.params.refund_id),
    );
  };
