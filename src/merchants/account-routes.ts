// GET /v1/account: who the presented key acts for. Lets an integrator check a key.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../http/authentication.ts';
import type { AppContext } from '../context.ts';
import { findShop } from './merchant-repository.ts';
import { NotFoundError } from '../errors.ts';
import { API_KEY_SCOPES } from './merchant-tables.ts';

const Account = Type.Object({
  merchant_id: Type.String(),
  shop_id: Type.String(),
  shop_name: Type.String(),
  mode: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
  key_id: Type.String(),
  scopes: Type.Array(Type.String()),
});

export const accountRoutes: FastifyPluginAsyncTypebox<{ context: AppContext }> = async (app, { context }) => {
  app.get(
    '/account',
    {
      // Any key may ask who it is.
      config: { scopes: API_KEY_SCOPES },
      schema: { tags: ['account'], summary: 'The shop and scopes of the presented API key', response: { 200: Account } },
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
