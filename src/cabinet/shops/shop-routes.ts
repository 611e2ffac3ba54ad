// /cabinet/shops: the merchant's shops, sandbox and live shown apart with a switch
// between them; each shop's settings hang under /cabinet/shops/:shopId.
import type { FastifyInstance } from 'fastify';
import { shopsOfMerchant } from '../../merchants/merchant-service.ts';
import { cabinetOf, sendPage, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { html } from '../views/html.ts';
import { translator } from '../views/cabinet-language.ts';
import SHOP_TEXTS from './shop-texts.json' with { type: 'json' };

const text = translator(SHOP_TEXTS);

export function shopRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get(
      '/cabinet/shops',
      { schema: { hide: true }, config: { cabinet: { access: 'signed-in' } } },
      async (request, reply) => {
        const { lang, merchantId } = cabinetOf(request);
        if (!merchantId)
          return sendPage(request, reply, http, {
            title: text(lang, 'shops'),
            children: html`<h1>${text(lang, 'shops')}</h1>
              <p class="card">${text(lang, 'no_merchant')}</p>`,
          });
        const mode = (request.query as { mode?: string }).mode === 'live' ? 'live' : 'sandbox';
        const shops = (await shopsOfMerchant(deps.db, merchantId)).filter((shop) => shop.mode === mode);
        return sendPage(request, reply, http, {
          title: text(lang, 'shops'),
          children: html`
            <h1>${text(lang, 'shops')}</h1>
            <nav class="actions" aria-label=${text(lang, 'mode_switch')}>
              ${(['sandbox', 'live'] as const).map((each) =>
                each === mode
                  ? html`<strong aria-current="page" class=${`badge ${each}`}>${text(lang, each)}</strong>`
                  : html`<a href=${`/cabinet/shops?mode=${each}`}>${text(lang, each)}</a>`,
              )}
            </nav>
            <section class="card">
              ${
                shops.length === 0
                  ? html`<p>${text(lang, 'none')}</p>`
                  : html`<div class="table-wrap">
                      <table>
                        <thead>
                          <tr>
                            <th scope="col">${text(lang, 'name')}</th>
                            <th scope="col">${text(lang, 'id')}</th>
                          </tr>
                        </thead>
                        <tbody>
                          ${shops.map(
                            (shop) =>
                              html`<tr>
                                <td><a href=${`/cabinet/shops/${shop.shopId}`}>${shop.name}</a></td>
                                <td><code>${shop.shopId}</code></td>
                              </tr>`,
                          )}
                        </tbody>
                      </table>
                    </div>`
              }
            </section>
          `,
        });
      },
    );
  };
}
