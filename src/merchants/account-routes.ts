// GET /v1/account: who the presented key acts for. Lets an integrator check a key.
import { Type } from 'typebox';
import { API_KEY_SCOPES } from '../http/api-scopes.ts';
import { principalOf } from '../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, errorResponses } from '../http/error-responses.ts';
import type { AppContext } from '../context.ts';
import type { ModuleRoutes } from '../gateway-module.ts';
import { findShop } from './merchant-repository.ts';
import { NotFoundError } from '../errors.ts';

const Account = Type.Object(
  {
    merchant_id: Type.String(),
    shop_id: Type.String(),
    shop_name: Type.String(),
    mode: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
    key_id: Type.String(),
    scopes: Type.Array(Type.Enum([...API_KEY_SCOPES])),
  },
  {
    description: 'Who the key acts for',
    examples: [
      {
        merchant_id: 'mer_01jcx0m8z4f6k2n9q3r5t7v8w1',
        shop_id: 'shop_01jcx0m8z4f6k2n9q3r5t7v8w2',
        shop_name: 'Coffee beans',
        mode: 'sandbox',
        key_id: 'key_01jcx0m8z4f6k2n9q3r5t7v8w3',
        scopes: ['payments', 'read'],
      },
    ],
  },
);

export const accountRoutes =
  (context: Pick<AppContext, 'db'>): ModuleRoutes =>
  async (app) => {
    app.get(
      '/account',
      {
        // Any key may ask who it is.
        config: { scopes: API_KEY_SCOPES },
        // A key always belongs to a shop (a foreign key), so the not-found below is a guard, not an answer.
        schema: {
          operationId: 'getAccount',
          tags: ['account'],
          summary: 'The shop and scopes of the presented API key',
          response: { 200: Account, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS) },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const shop = await findShop(context.db, principal.shopId);
        if (!shop) throw new NotFoundError();
        return {
          merchant_id: principal.merchantId,
          shop_id: shop.id,
          shop_name: shop.name,
          mode: shop.mode,
          key_id: principal.keyId,
          scopes: [...principal.scopes],
        };
      },
    );
  };
