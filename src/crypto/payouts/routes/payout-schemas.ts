// The TypeBox schemas of the payouts API: the payout (spec 2.4 plus batch_id and
// network_fee_actual), the fee quote and the batch, with examples for the OpenAPI document.
import { Type } from 'typebox';
import { EXTERNAL_ID_MAX_LENGTH } from '../payout-service.ts';
import { BATCH_ITEMS_MAX } from '../batch-service.ts';
import { NETWORK_MODE, TRC20_USDT } from '../../receiving/routes/crypto-schemas.ts';

export { EXTERNAL_ID_MAX_LENGTH, BATCH_ITEMS_MAX };

const Usdt = (description: string) =>
  Type.String({ description: `${description}; USDT as a decimal string without trailing zeros ("10.5", "1.35")` });
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const PayoutStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('processing'),
  Type.Literal('completed'),
  Type.Literal('failed'),
]);
const BatchStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('processing'),
  Type.Literal('completed'),
  Type.Literal('partially_completed'),
  Type.Literal('failed'),
]);

export const PayoutExternalId = Type.String({
  minLength: 1,
  maxLength: EXTERNAL_ID_MAX_LENGTH,
  description: 'your id of the payout (1 to 100 characters); the idempotency key',
});
export const PayoutAmountInput = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    'USDT to send as a decimal string with at most 2 decimal places ("10", "10.5", "10.50"), within the shop’s payout limits; a JSON number is refused',
});
export const PayoutNetworkInput = Type.String({
  maxLength: 32,
  description: 'TRC20 (USDT on TRON); the only network supported',
});
export const RecipientInput = Type.String({
  maxLength: 64,
  description: 'the recipient’s TRON address in base58 (T…), checksum verified',
});

const EXAMPLE_RECIPIENT = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const EXAMPLE_TX = '9f2c7b1d4e8a3f6c0b5d2e9a7c1f4b8e3d6a0c9f2b5e8d1a4c7f0b3e6d9a2c5f';

/** What the payout example was quoted: its fields in the payout's order. */
const QUOTE_EXAMPLE = {
  network: 'TRC20',
  asset: 'USDT',
  recipient_address: EXAMPLE_RECIPIENT,
  recipient_amount: '100',
  network_fee: '2.71',
  service_fee: '0.5',
  total_debit: '103.21',
};

export const PAYOUT_EXAMPLE = {
  payout_id: 'po_01jcx1a2b3c4d5e6f7g8h9j0k3',
  external_id: 'payout-42',
  status: 'completed',
  ...QUOTE_EXAMPLE,
  network_mode: 'mainnet',
  network_fee_actual: '2.701',
  tx_hash: EXAMPLE_TX,
  error: null,
  batch_id: null,
  created_at: '2026-11-01T10:00:00.000Z',
  completed_at: '2026-11-01T10:01:00.000Z',
};

export const Payout = Type.Object(
  {
    payout_id: Type.String(),
    external_id: Type.String({ description: 'your id of the payout; the idempotency key' }),
    status: PayoutStatus,
    ...TRC20_USDT,
    ...NETWORK_MODE,
    recipient_address: Type.String(),
    recipient_amount: Usdt('what the recipient receives'),
    network_fee: Usdt('the network fee quoted at acceptance, rounded up to the cent'),
    service_fee: Usdt('the shop’s payout tariff, rounded up to the cent'),
    total_debit: Usdt('recipient_amount + network_fee + service_fee; reserved at acceptance, debited at completion'),
    network_fee_actual: Type.Union([Usdt('what the chain actually burned, at the rate of the quote'), Type.Null()], {
      description: 'null until the transfer is final',
    }),
    tx_hash: Type.Union([Type.String(), Type.Null()], { description: 'null until a transaction is broadcast' }),
    error: Type.Union(
      [
        Type.Object({
          code: Type.String({
            description:
              'reverted, out_of_energy, expired, insufficient_hot_wallet_funds, address_blacklisted, invalid_address, rejected or signer_unavailable',
          }),
          message: Type.String(),
        }),
        Type.Null(),
      ],
      { description: 'why a failed payout failed; null otherwise' },
    ),
    batch_id: Type.Union([Type.String(), Type.Null()], { description: 'the batch payout the payout is an item of' }),
    created_at: Timestamp,
    completed_at: NullableTimestamp,
  },
  { description: 'A USDT payout from the shop’s balance', examples: [PAYOUT_EXAMPLE] },
);

export const Quote = Type.Object(
  {
    ...TRC20_USDT,
    recipient_address: Type.String(),
    recipient_amount: Usdt('what the recipient would receive'),
    network_fee: Usdt('the network fee at the chain’s current prices'),
    service_fee: Usdt('the shop’s payout tariff'),
    total_debit: Usdt('what the payout would reserve now'),
  },
  {
    description: 'What a payout would cost now; nothing is created',
    examples: [QUOTE_EXAMPLE],
  },
);

const Counts = Type.Object(
  { pending: Type.Integer(), processing: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() },
  { description: 'items per state' },
);

export const Batch = Type.Object(
  {
    batch_id: Type.String(),
    external_id: Type.String({ description: 'your id of the batch; the idempotency key' }),
    status: BatchStatus,
    ...TRC20_USDT,
    item_count: Type.Integer(),
    total_debit: Usdt('the sum of the items’ total_debit'),
    counts: Counts,
    created_at: Timestamp,
    completed_at: Type.Union([Timestamp, Type.Null()], { description: 'when the last item became final' }),
    payouts: Type.Array(Payout, { description: 'the items, in the order of the request' }),
  },
  {
    description: 'A batch payout and its items',
    examples: [
      {
        batch_id: 'pob_01jcx1a2b3c4d5e6f7g8h9j0k4',
        external_id: 'batch-7',
        status: 'completed',
        network: 'TRC20',
        asset: 'USDT',
        item_count: 1,
        total_debit: '103.21',
        counts: { pending: 0, processing: 0, completed: 1, failed: 0 },
        created_at: '2026-11-01T10:00:00.000Z',
        completed_at: '2026-11-01T10:01:00.000Z',
        payouts: [{ ...PAYOUT_EXAMPLE, batch_id: 'pob_01jcx1a2b3c4d5e6f7g8h9j0k4' }],
      },
    ],
  },
);

export const PayoutParams = Type.Object({
  payout_id: Type.String({ maxLength: 64, description: 'The payout_id of a payout of this shop' }),
});
export const BatchParams = Type.Object({
  batch_id: Type.String({ maxLength: 64, description: 'The batch_id of a batch payout of this shop' }),
});
