// The TypeBox schemas of the crypto receiving API: the invoice, wallet and
// deposit resources as the services return them (InvoiceView, WalletView,
// DepositView), with examples the OpenAPI document shows.
import { Type } from 'typebox';

export {
  CALLBACK_URL_MAX_LENGTH,
  EXTERNAL_ID_MAX_LENGTH,
  LIFETIME_DEFAULT_S,
  LIFETIME_MAX_S,
  LIFETIME_MIN_S,
} from '../invoice-service.ts';
/** client_id is bounded like external_id (invoice-service.ts parseTextId). */
export { EXTERNAL_ID_MAX_LENGTH as CLIENT_ID_MAX_LENGTH } from '../invoice-service.ts';
/** The longest USDT decimal string that can be valid: 10 integer digits, a point, 6 places. */
const AMOUNT_MAX_LENGTH = 40;

export const InvoiceStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('confirming'),
  Type.Literal('paid'),
  Type.Literal('overpaid'),
  Type.Literal('underpaid'),
  Type.Literal('expired'),
]);
export const WalletStatus = Type.Union([Type.Literal('active'), Type.Literal('blocked')]);
const DepositStatus = Type.Union([
  Type.Literal('confirming'),
  Type.Literal('credited'),
  Type.Literal('held'),
  Type.Literal('orphaned'),
  Type.Literal('unconfirmed'),
]);

/** The network and asset of every crypto object: USDT on TRON. */
export const TRC20_USDT = { network: Type.Literal('TRC20'), asset: Type.Literal('USDT') };

/** Whether the object's USDT is real, stored when it was made (docs/api-decisions.md "network_mode"). */
export const NETWORK_MODE = {
  network_mode: Type.Union([Type.Literal('mainnet'), Type.Literal('testnet')], {
    description:
      'mainnet: real USDT on TRON mainnet (a live shop). testnet: money of no value: a sandbox shop (the simulated chain) or a live shop of a gateway on the Nile testnet',
  }),
};

const Usdt = (description: string) =>
  Type.String({ description: `${description}; USDT as a decimal string with at most 6 places` });
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const TronAddress = (description: string) =>
  Type.String({ description: `${description}; a TRON address in base58 (T…)` });

const EXAMPLE_ADDRESS = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
const EXAMPLE_WALLET_ADDRESS = 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK';
const EXAMPLE_PAYER = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const EXAMPLE_TX = '9f2c7b1d4e8a3f6c0b5d2e9a7c1f4b8e3d6a0c9f2b5e8d1a4c7f0b3e6d9a2c5f';

export const NetworkInput = Type.String({
  maxLength: 32,
  description: 'TRC20 (USDT on TRON); the only network supported',
});
export const AmountInput = Type.String({
  minLength: 1,
  maxLength: AMOUNT_MAX_LENGTH,
  description:
    'USDT as a decimal string: more than 0, at most 1 000 000 000, at most 6 decimal places ("10", "10.5", "0.000001"); a JSON number is refused',
});

export const INVOICE_EXAMPLE = {
  invoice_id: 'inv_01jcx1a2b3c4d5e6f7g8h9j0k3',
  external_id: 'order-42',
  status: 'pending',
  network: 'TRC20',
  network_mode: 'mainnet',
  asset: 'USDT',
  amount: '25.5',
  paid_amount: '0',
  address: EXAMPLE_ADDRESS,
  payment_uri: `tron:${EXAMPLE_ADDRESS}?amount=25.5`,
  lifetime_s: 3600,
  callback_url: 'https://shop.example.com/paygate/crypto',
  expires_at: '2026-11-01T11:00:00.000Z',
  paid_at: null,
  created_at: '2026-11-01T10:00:00.000Z',
  updated_at: '2026-11-01T10:00:00.000Z',
};

export const Invoice = Type.Object(
  {
    invoice_id: Type.String(),
    external_id: Type.String({ description: 'your id of the invoice; the idempotency key' }),
    status: InvoiceStatus,
    ...TRC20_USDT,
    ...NETWORK_MODE,
    amount: Usdt('the amount asked'),
    paid_amount: Usdt(
      'the sum of the final (solidified) deposits to the address; a deposit still confirming is not counted yet',
    ),
    address: TronAddress('the deposit address, used by this invoice only'),
    payment_uri: Type.String({ description: 'tron:<address>?amount=<amount>, the text of the QR code' }),
    lifetime_s: Type.Integer(),
    callback_url: Type.Union([Type.String(), Type.Null()]),
    expires_at: Timestamp,
    paid_at: NullableTimestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'A crypto invoice', examples: [INVOICE_EXAMPLE] },
);

const DEPOSIT_EXAMPLE = {
  deposit_id: 'dep_01jcx1a2b3c4d5e6f7g8h9j0k5',
  tx_id: EXAMPLE_TX,
  log_index: 0,
  from_address: EXAMPLE_PAYER,
  amount: '100',
  status: 'credited',
  block_number: 1042,
  seen_at: '2026-11-01T10:05:00.000Z',
  final_at: '2026-11-01T10:06:00.000Z',
  invoice_id: null,
  wallet_id: 'wal_01jcx1a2b3c4d5e6f7g8h9j0k4',
};

const Deposit = Type.Object(
  {
    deposit_id: Type.String(),
    tx_id: Type.String(),
    log_index: Type.Integer(),
    from_address: TronAddress('the payer'),
    amount: Usdt('the amount received'),
    status: DepositStatus,
    block_number: Type.Integer(),
    seen_at: Timestamp,
    final_at: NullableTimestamp,
    invoice_id: Type.Union([Type.String(), Type.Null()]),
    wallet_id: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'A USDT transfer to one of the shop’s addresses', examples: [DEPOSIT_EXAMPLE] },
);

const WALLET_FIELDS = {
  wallet_id: Type.String(),
  client_id: Type.String({ description: 'your id of the customer the wallet belongs to' }),
  ...TRC20_USDT,
  ...NETWORK_MODE,
  address: TronAddress('the permanent deposit address of the wallet'),
  status: WalletStatus,
  received_amount: Usdt('credited deposits'),
  held_amount: Usdt('deposits received while the wallet was blocked, not credited'),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WALLET_EXAMPLE = {
  wallet_id: 'wal_01jcx1a2b3c4d5e6f7g8h9j0k4',
  client_id: 'customer-7',
  network: 'TRC20',
  network_mode: 'mainnet',
  asset: 'USDT',
  address: EXAMPLE_WALLET_ADDRESS,
  status: 'active',
  received_amount: '100',
  held_amount: '0',
  created_at: '2026-11-01T10:00:00.000Z',
  updated_at: '2026-11-01T10:00:00.000Z',
};

export const Wallet = Type.Object(
  {
    ...WALLET_FIELDS,
    deposits: Type.Optional(Type.Array(Deposit, { description: 'present when one wallet is read' })),
  },
  {
    description: 'A static wallet: one permanent address per customer',
    examples: [{ ...WALLET_EXAMPLE, deposits: [DEPOSIT_EXAMPLE] }],
  },
);

export function pageOf<T extends ReturnType<typeof Type.Object>>(item: T, noun: string, example: unknown) {
  return Type.Object(
    { data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) },
    {
      description: `A page of ${noun}, newest first; pass next_cursor as cursor for the next page`,
      examples: [{ data: [example], next_cursor: null }],
    },
  );
}

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const InvoiceParams = Type.Object({
  invoice_id: Type.String({ maxLength: 64, description: 'The invoice_id of an invoice of this shop' }),
});
export const WalletParams = Type.Object({
  wallet_id: Type.String({ maxLength: 64, description: 'The wallet_id of a wallet of this shop' }),
});
