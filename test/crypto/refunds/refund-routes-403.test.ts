// Who may call the refund routes: creating one needs the `crypto` scope (a
// refund sends back what crypto receiving took in), reading one `read` or
// `crypto`; any other key gets 403 forbidden and a refused create changes nothing.
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../../support/scope-matrix.ts';
import { externalId, recipient } from '../payouts/payout-support.ts';
import { fixtureDeposit } from './refund-fixtures.ts';

function fixtureShop(shop: MatrixShop) {
  return {
    shopId: shop.merchant.shop_id,
    merchantId: shop.merchant.merchant_id,
    call: (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
      authorized(shop, { method, url, payload }),
  };
}

async function creditedDeposit(shop: MatrixShop): Promise<string> {
  return (await fixtureDeposit(shop.testApp.context.db, shop.testApp.clock, fixtureShop(shop), 50_000_000n)).depositId;
}

const refundsOf = async (shop: MatrixShop) =>
  shop.testApp.context.db
    .selectFrom('crypto_refunds')
    .select('id')
    .where('shop_id', '=', shop.merchant.shop_id)
    .execute();

const calls: Record<string, RouteCall> = {
  'POST /v1/crypto/refunds': {
    request: async (shop) => ({
      url: '/v1/crypto/refunds',
      payload: { external_id: externalId('refund'), deposit_id: await creditedDeposit(shop), address: recipient() },
    }),
    successStatus: 201,
    observe: refundsOf,
  },
  'GET /v1/crypto/refunds/:refund_id': {
    request: async (shop) => {
      const payload = {
        external_id: externalId('refund'),
        deposit_id: await creditedDeposit(shop),
        address: recipient(),
      };
      const created = (await authorized(shop, { method: 'POST', url: '/v1/crypto/refunds', payload })).json();
      return { url: `/v1/crypto/refunds/${created.refund_id}` };
    },
    successStatus: 200,
  },
};

scopeMatrix('refunds', calls);
