// Who may call each payments route: creating payments and the sandbox helpers
// need `payments`; reading payments takes `read` or `payments`. So do refunds.
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../support/scope-matrix.ts';

async function pendingPayment(shop: MatrixShop): Promise<string> {
  const created = await authorized(shop, {
    method: 'POST',
    url: '/v1/payments',
    payload: { amount: 100, currency: 'RUB' },
  });
  return created.json().payment_id;
}

/** A paid payment of the shop (the sandbox helper pays it), to refund. */
async function paidPayment(shop: MatrixShop): Promise<string> {
  const paymentId = await pendingPayment(shop);
  await authorized(shop, { method: 'POST', url: `/v1/test_helpers/payments/${paymentId}/pay` });
  return paymentId;
}

/** A paid payment with one refund of 10 RUB. */
async function refundedPayment(shop: MatrixShop): Promise<{ paymentId: string; refundId: string }> {
  const paymentId = await paidPayment(shop);
  const refund = await authorized(shop, {
    method: 'POST',
    url: `/v1/payments/${paymentId}/refunds`,
    payload: { amount: 10 },
  });
  return { paymentId, refundId: refund.json().refund_id };
}

/** The shop's payments as the merchant sees them: what a refused write would have changed. */
async function paymentsOf(shop: MatrixShop) {
  return (await authorized(shop, { method: 'GET', url: '/v1/payments' })).json();
}

function helper(action: 'pay' | 'fail' | 'expire'): RouteCall {
  return {
    request: async (shop) => ({ url: `/v1/test_helpers/payments/${await pendingPayment(shop)}/${action}` }),
    successStatus: 200,
    observe: paymentsOf,
  };
}

const calls: Record<string, RouteCall> = {
  'POST /v1/payments': {
    request: async () => ({ url: '/v1/payments', payload: { amount: 100, currency: 'RUB' } }),
    successStatus: 201,
    observe: paymentsOf,
  },
  'GET /v1/payments': { request: async () => ({ url: '/v1/payments' }), successStatus: 200 },
  'GET /v1/payments/:payment_id': {
    request: async (shop) => ({ url: `/v1/payments/${await pendingPayment(shop)}` }),
    successStatus: 200,
  },
  'POST /v1/payments/:payment_id/refunds': {
    request: async (shop) => ({ url: `/v1/payments/${await paidPayment(shop)}/refunds`, payload: { amount: 10 } }),
    successStatus: 201,
    observe: async (shop) => (await authorized(shop, { method: 'GET', url: '/v1/crypto/balance' })).json(),
  },
  'GET /v1/payments/:payment_id/refunds': {
    request: async (shop) => ({ url: `/v1/payments/${(await refundedPayment(shop)).paymentId}/refunds` }),
    successStatus: 200,
  },
  'GET /v1/payments/:payment_id/refunds/:refund_id': {
    request: async (shop) => {
      const { paymentId, refundId } = await refundedPayment(shop);
      return { url: `/v1/payments/${paymentId}/refunds/${refundId}` };
    },
    successStatus: 200,
  },
  'POST /v1/test_helpers/payments/:payment_id/pay': helper('pay'),
  'POST /v1/test_helpers/payments/:payment_id/fail': helper('fail'),
  'POST /v1/test_helpers/payments/:payment_id/expire': helper('expire'),
};

scopeMatrix('payments', calls);
