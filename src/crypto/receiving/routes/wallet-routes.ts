// /v1/crypto/wallets: static wallets (one permanent address per customer),
// idempotent by client_id + network; block and unblock. Thin: schema, scope,
// call wallet-service.
import { Type } from 'typebox';
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { blockWallet, createWallet, getWallet, listWallets, unblockWallet } from '../wallet-service.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import type { AddressPoolDeps } from '../address-pool.ts';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import {
  CLIENT_ID_MAX_LENGTH,
  NetworkInput,
  PageQuery,
  WALLET_EXAMPLE,
  Wallet,
  WalletParams,
  WalletStatus,
  pageOf,
} from './crypto-schemas.ts';
import { listRouteOptions, pageRequest } from '../../../http/page-request.ts';

const CreateWalletBody = Type.Object(
  {
    client_id: Type.String({
      minLength: 1,
      maxLength: CLIENT_ID_MAX_LENGTH,
      description: 'your id of the customer (1 to 100 characters)',
    }),
    network: NetworkInput,
  },
  { additionalProperties: false, examples: [{ client_id: 'customer-7', network: 'TRC20' }] },
);

const ListWalletsQuery = Type.Object(
  {
    ...PageQuery,
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: CLIENT_ID_MAX_LENGTH })),
    status: Type.Optional(WalletStatus),
  },
  { additionalProperties: false },
);

const STATE_CHANGES = [
  {
    action: 'block',
    run: blockWallet,
    operationId: 'blockCryptoWallet',
    summary: 'Block a wallet: its later deposits are held, not credited',
  },
  {
    action: 'unblock',
    run: unblockWallet,
    operationId: 'unblockCryptoWallet',
    summary: 'Unblock a wallet: its later deposits are credited again',
  },
] as const;

export const walletRoutes =
  (deps: CryptoDeps & AddressPoolDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/crypto/wallets',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'createCryptoWallet',
          tags: ['crypto wallets'],
          summary: 'Create the static wallet of a customer (the same wallet again for the same client_id and network)',
          body: CreateWalletBody,
          response: {
            200: { ...Wallet, description: 'The wallet created earlier for this client_id and network' },
            201: { ...Wallet, description: 'The wallet, created now' },
            ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', ...REQUEST_BODY_ERRORS),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await createWallet(deps, { shopId: principal.shopId, mode: principal.shopMode }, request.body);
        return reply.code(result.created ? 201 : 200).send(result.wallet);
      },
    );

    app.get(
      '/crypto/wallets',
      listRouteOptions({
        scopes: ['crypto'],
        operationId: 'listCryptoWallets',
        tag: 'crypto wallets',
        summary: 'List wallets, newest first',
        querystring: ListWalletsQuery,
        page: pageOf(Wallet, 'wallets', WALLET_EXAMPLE),
      }),
      async (request) =>
        listWallets(deps, principalOf(request).shopId, {
          ...pageRequest(request.query),
          client_id: request.query.client_id,
          status: request.query.status,
        }),
    );

    app.get(
      '/crypto/wallets/:wallet_id',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'getCryptoWallet',
          tags: ['crypto wallets'],
          summary: 'Get a wallet with its deposits and totals',
          params: WalletParams,
          response: { 200: Wallet, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'not_found') },
        },
      },
      async (request) => getWallet(deps, principalOf(request).shopId, request.params.wallet_id),
    );

    for (const { action, run, operationId, summary } of STATE_CHANGES) {
      app.post(
        `/crypto/wallets/:wallet_id/${action}`,
        {
          config: { scopes: ['crypto'] },
          schema: {
            operationId,
            tags: ['crypto wallets'],
            summary,
            description: `A wallet that is already ${action}ed answers 409 invalid_state.`,
            params: WalletParams,
            response: {
              200: Wallet,
              ...errorResponses(
                ...AUTHENTICATED_ROUTE_ERRORS,
                'forbidden',
                ...REQUEST_BODY_ERRORS,
                'not_found',
                'invalid_state',
              ),
            },
          },
        },
        async (request) => {
          const principal = principalOf(request);
          // Audited like the cabinet's buttons, the key as the actor.
          const actor = {
            kind: 'api_key' as const,
            id: principal.keyId,
            label: principal.keyId,
            ip: request.ip,
            userAgent: String(request.headers['user-agent'] ?? ''),
          };
          return run(deps, principal.shopId, request.params.wallet_id, { actor, merchantId: principal.merchantId });
        },
      );
    }
  };
