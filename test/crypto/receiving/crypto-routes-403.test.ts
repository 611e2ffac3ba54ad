// Who may call each crypto receiving route: every one needs the `crypto` scope
// (the sending test helpers take `payouts` too); any other key gets 403
// forbidden and a refused write changes nothing.
import { authorized, scopeMatrix, type MatrixShop, type RouteCall } from '../../support/scope-matrix.ts';
import { externalId, invoiceBody } from './crypto-routes-support.ts';

async function invoice(shop: MatrixShop): Promise<{ invoice_id: string; address: string }> {
  return (await authorized(shop, { method: 'POST', url: '/v1/crypto/invoices', payload: invoiceBody() })).json();
}

async function wallet(shop: MatrixShop, blocked = false): Promise<string> {
  const created = (
    await authorized(shop, {
      method: 'POST',
      url: '/v1/crypto/wallets',
      payload: { client_id: externalId('client'), network: 'TRC20' },
    })
  ).json();
  if (blocked) await authorized(shop, { method: 'POST', url: `/v1/crypto/wallets/${created.wallet_id}/block` });
  return created.wallet_id;
}

const invoicesOf = async (shop: MatrixShop) =>
  (await authorized(shop, { method: 'GET', url: '/v1/crypto/invoices' })).json();
const walletsOf = async (shop: MatrixShop) =>
  (await authorized(shop, { method: 'GET', url: '/v1/crypto/wallets' })).json();

const calls: Record<string, RouteCall> = {
  'POST /v1/crypto/invoices': {
    request: async () => ({ url: '/v1/crypto/invoices', payload: invoiceBody() }),
    successStatus: 201,
    observe: invoicesOf,
  },
  'GET /v1/crypto/invoices': { request: async () => ({ url: '/v1/crypto/invoices' }), successStatus: 200 },
  'GET /v1/crypto/invoices/:invoice_id': {
    request: async (shop) => ({ url: `/v1/crypto/invoices/${(await invoice(shop)).invoice_id}` }),
    successStatus: 200,
  },
  'GET /v1/crypto/invoices/:invoice_id/qr.svg': {
    request: async (shop) => ({ url: `/v1/crypto/invoices/${(await invoice(shop)).invoice_id}/qr.svg` }),
    successStatus: 200,
  },
  'POST /v1/crypto/wallets': {
    request: async () => ({
      url: '/v1/crypto/wallets',
      payload: { client_id: externalId('client'), network: 'TRC20' },
    }),
    successStatus: 201,
    observe: walletsOf,
  },
  'GET /v1/crypto/wallets': { request: async () => ({ url: '/v1/crypto/wallets' }), successStatus: 200 },
  'GET /v1/crypto/wallets/:wallet_id': {
    request: async (shop) => ({ url: `/v1/crypto/wallets/${await wallet(shop)}` }),
    successStatus: 200,
  },
  'POST /v1/crypto/wallets/:wallet_id/block': {
    request: async (shop) => ({ url: `/v1/crypto/wallets/${await wallet(shop)}/block` }),
    successStatus: 200,
    observe: walletsOf,
  },
  'POST /v1/crypto/wallets/:wallet_id/unblock': {
    request: async (shop) => ({ url: `/v1/crypto/wallets/${await wallet(shop, true)}/unblock` }),
    successStatus: 200,
    observe: walletsOf,
  },
  'POST /v1/test_helpers/crypto/deposits': {
    request: async (shop) => ({
      url: '/v1/test_helpers/crypto/deposits',
      payload: { address: (await invoice(shop)).address, amount: '1' },
    }),
    successStatus: 200,
    observe: invoicesOf,
  },
  'POST /v1/test_helpers/crypto/blocks': {
    request: async () => ({ url: '/v1/test_helpers/crypto/blocks', payload: { count: 1 } }),
    successStatus: 200,
  },
  'POST /v1/test_helpers/crypto/reorg': {
    request: async (shop) => {
      // Enough blocks that one unsolidified block exists to replace.
      await authorized(shop, { method: 'POST', url: '/v1/test_helpers/crypto/blocks', payload: { count: 20 } });
      return { url: '/v1/test_helpers/crypto/reorg', payload: { depth: 1 } };
    },
    successStatus: 200,
  },
  'POST /v1/test_helpers/crypto/next_transfer_outcome': {
    request: async (shop) => ({
      url: '/v1/test_helpers/crypto/next_transfer_outcome',
      payload: { address: (await invoice(shop)).address, outcome: 'revert' },
    }),
    successStatus: 200,
  },
  'POST /v1/test_helpers/crypto/hot_wallet/drain_trx': {
    request: async () => ({ url: '/v1/test_helpers/crypto/hot_wallet/drain_trx', payload: {} }),
    successStatus: 200,
  },
  'POST /v1/test_helpers/crypto/faucet': {
    request: async () => ({ url: '/v1/test_helpers/crypto/faucet', payload: { trx: '1' } }),
    successStatus: 200,
  },
  'POST /v1/test_helpers/crypto/blacklist': {
    request: async () => ({
      url: '/v1/test_helpers/crypto/blacklist',
      payload: { listed: false },
    }),
    successStatus: 200,
  },
  'POST /v1/test_helpers/crypto/invoices/:invoice_id/expire': {
    request: async (shop) => ({ url: `/v1/test_helpers/crypto/invoices/${(await invoice(shop)).invoice_id}/expire` }),
    successStatus: 200,
    observe: invoicesOf,
  },
};

scopeMatrix('crypto', calls);
