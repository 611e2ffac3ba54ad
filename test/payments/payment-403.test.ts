// Who may call each payments route: creating payments and the sandbox helpers
// need `payments`; reading payments takes `read` or `payments`.
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../support/scope-matrix.ts';

async function pendingPayment(shop: MatrixShop): Promise<string> {
  const created = await authorized(shop, {
    method: 'POST',
    url: '/v1/payments',
    payload: { amount: 100, currency: 'RUB' },
  });
  return created.json().payment_id;
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
  'POST /v1/test_helpers/payments/:payment_id/pay': helper('pay'),
  'POST /v1/test_helpers/payments/:payment_id/fail': helper('fail'),
  'POST /v1/test_helpers/payments/:payment_id/expire': helper('expire'),
};

scopeMatrix('payments', calls);
