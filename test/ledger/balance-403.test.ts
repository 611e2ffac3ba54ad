// Who may call each balance route: moving money between the merchant's own
// accounts needs `crypto` or `payouts`; reading balances and operations takes
// any scope but `webhooks`.
import { inTransaction } from '../../src/db/transaction.ts';
import { creditPaymentPaid } from '../../src/payments/payment-credit.ts';
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../support/scope-matrix.ts';

interface Account {
  account_id: string;
  currency: string;
  kind: string;
}

async function balances(shop: MatrixShop) {
  return (await authorized(shop, { method: 'GET', url: '/v1/crypto/balance' })).json() as { accounts: Account[] };
}

/** A transfer of 1.00 RUB from main to payout, with main funded as a paid payment would fund it. */
async function fundedTransfer(shop: MatrixShop) {
  const { accounts } = await balances(shop);
  const { context } = shop.testApp;
  await inTransaction(context.db, (tx) =>
    creditPaymentPaid(tx, context.clock, {
      paymentId: crypto.randomUUID(),
      merchantId: shop.merchant.merchant_id,
      book: 'sandbox',
      amountKopecks: 10_000n,
      feeKopecks: 0n,
    }),
  );
  const account = (kind: string) =>
    accounts.find((candidate) => candidate.currency === 'RUB' && candidate.kind === kind)!.account_id;
  return {
    url: '/v1/crypto/balance/transfers',
    payload: {
      external_id: `t-${crypto.randomUUID()}`,
      from_account_id: account('main'),
      to_account_id: account('payout'),
      amount: '1.00',
    },
  };
}

const calls: Record<string, RouteCall> = {
  'GET /v1/crypto/balance': { request: async () => ({ url: '/v1/crypto/balance' }), successStatus: 200 },
  'POST /v1/crypto/balance/transfers': { request: fundedTransfer, successStatus: 201, observe: balances },
  'GET /v1/crypto/balance/operations': {
    request: async () => ({ url: '/v1/crypto/balance/operations' }),
    successStatus: 200,
  },
};

scopeMatrix('ledger', calls);
