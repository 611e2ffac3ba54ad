// Who may call each payout route: creating, quoting and batching need the
// `payouts` scope (the sandbox's withdrawal helper too); reading takes `read` or `payouts`. Any other key gets 403
// forbidden and a refused write changes nothing.
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../../support/scope-matrix.ts';
import { fundShop } from './payout-matrix-funding.ts';
import { externalId, payoutBody, recipient } from './payout-support.ts';

async function payout(shop: MatrixShop): Promise<string> {
  return (await authorized(shop, { method: 'POST', url: '/v1/crypto/payouts', payload: payoutBody() })).json()
    .payout_id;
}

async function batch(shop: MatrixShop): Promise<string> {
  return (await authorized(shop, { method: 'POST', url: '/v1/crypto/payouts/batch', payload: batchBody() })).json()
    .batch_id;
}

function batchBody() {
  return {
    external_id: externalId('batch'),
    network: 'TRC20',
    payouts: [{ external_id: externalId('item'), amount: '1', address: recipient() }],
  };
}

const payoutsOf = async (shop: MatrixShop) =>
  (await authorized(shop, { method: 'GET', url: '/v1/crypto/payouts' })).json();

const balanceOf = async (shop: MatrixShop) =>
  (await authorized(shop, { method: 'GET', url: '/v1/crypto/balance' })).json();

const funded = fundShop;

const calls: Record<string, RouteCall> = {
  'POST /v1/crypto/payouts': {
    request: async (shop) => (await funded(shop), { url: '/v1/crypto/payouts', payload: payoutBody() }),
    successStatus: 201,
    observe: payoutsOf,
  },
  'POST /v1/crypto/payouts/quote': {
    request: async () => ({
      url: '/v1/crypto/payouts/quote',
      payload: { network: 'TRC20', amount: '10', address: recipient() },
    }),
    successStatus: 200,
  },
  'POST /v1/crypto/payouts/batch': {
    request: async (shop) => (await funded(shop), { url: '/v1/crypto/payouts/batch', payload: batchBody() }),
    successStatus: 201,
    observe: payoutsOf,
  },
  'POST /v1/test_helpers/crypto/withdrawals': {
    request: async (shop) => (
      await funded(shop),
      {
        url: '/v1/test_helpers/crypto/withdrawals',
        payload: { external_id: externalId('wd'), amount: '1', address: recipient() },
      }
    ),
    successStatus: 201,
    observe: balanceOf,
  },
  'GET /v1/crypto/payouts': { request: async () => ({ url: '/v1/crypto/payouts' }), successStatus: 200 },
  'GET /v1/crypto/payouts/:payout_id': {
    request: async (shop) => (await funded(shop), { url: `/v1/crypto/payouts/${await payout(shop)}` }),
    successStatus: 200,
  },
  'GET /v1/crypto/payouts/batch/:batch_id': {
    request: async (shop) => (await funded(shop), { url: `/v1/crypto/payouts/batch/${await batch(shop)}` }),
    successStatus: 200,
  },
};

scopeMatrix('payouts', calls);
