// /cabinet/shops: the merchant's shops, sandbox and live shown apart with a switch
// between them, and a new shop made from there; /cabinet/shops/:shopId is one
// shop's overview (rename, links to its settings pages).
import type { FastifyInstance } from 'fastify';
import { createShop, renameShop, shopsOfMerchant, type ShopProfile } from '../../merchants/merchant-service.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan, type Permission, type Role } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { CopyButton, CsrfField } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import SHOP_TEXTS from './shop-texts.json' with { type: 'json' };

const text = translator(SHOP_TEXTS);
type Form = Record<string, string | undefined>;

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'shops.read' as const } } } };
const MANAGE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'shops.manage' as const, money: false } } },
};
/** A new shop comes with a new API key and webhook secret: key creation, so the second factor is asked again. */
const CREATE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'shops.manage' as const, stepUp: true } } },
};

/** A shop's settings pages, each shown to the roles that may open it. */
const SHOP_PAGES: ReadonlyArray<{
  path: string;
  label: Parameters<typeof text>[1];
  permission: Permission;
  sandboxOnly?: boolean;
}> = [
  { path: 'overview', label: 'link_overview', permission: 'balances.read' },
  { path: 'payments', label: 'link_payments', permission: 'payments.read' },
  { path: 'invoices', label: 'link_invoices', permission: 'payments.read' },
  { path: 'wallets', label: 'link_wallets', permission: 'payments.read' },
  { path: 'deposits', label: 'link_deposits', permission: 'payments.read' },
  { path: 'refunds', label: 'link_refunds', permission: 'payments.read' },
  { path: 'payouts', label: 'link_payouts', permission: 'payments.read' },
  { path: 'payouts/batches', label: 'link_batches', permission: 'payments.read' },
  { path: 'payouts/new', label: 'link_new_payout', permission: 'payouts.create' },
  { path: 'payouts/batches/upload', label: 'link_upload_batch', permission: 'payouts.create' },
  { path: 'operations', label: 'link_operations', permission: 'balances.read' },
  { path: 'transfers', label: 'link_transfers', permission: 'balances.read' },
  { path: 'withdrawals', label: 'link_withdrawals', permission: 'balances.read' },
  { path: 'accounting', label: 'link_accounting', permission: 'exports.create' },
  { path: 'keys', label: 'link_keys', permission: 'keys.read' },
  { path: 'methods', label: 'link_methods', permission: 'methods.read' },
  { path: 'webhooks', label: 'link_webhooks', permission: 'webhooks.read' },
  { path: 'crypto', label: 'link_crypto', permission: 'crypto.read' },
  { path: 'sandbox', label: 'link_sandbox', permission: 'sandbox.tools', sandboxOnly: true },
];

function ModeBadge(props: { lang: Lang; mode: ShopProfile['mode'] }): View {
  return html`<span class=${`badge ${props.mode}`}>${text(props.lang, `mode_${props.mode}`)}</span>`;
}

export function shopRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get(
      '/cabinet/shops',
      { schema: { hide: true }, config: { cabinet: { access: 'signed-in' } } },
      async (request, reply) => {
        const { lang, merchantId, role, session } = cabinetOf(request);
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
            ${role && roleCan(role, 'shops.manage') ? CreateShopForm({ lang, csrf: session!.csrf_token, mode }) : null}
          `,
        });
      },
    );

    app.post('/cabinet/shops', CREATE, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const { merchantId } = merchantOf(request);
      const form = (request.body ?? {}) as Form;
      const created = await createShop(deps, {
        merchantId,
        name: form.name,
        mode: form.mode === 'live' ? 'live' : 'sandbox',
        actor: actorOf(request),
      });
      // The secrets are in this response only: no redirect carries them, the page is not cached.
      return sendPage(request, reply, http, {
        title: text(lang, 'created_title'),
        notice: { kind: 'info', text: text(lang, 'created_once') },
        children: html`
          <h1>${text(lang, 'created_title')}</h1>
          <section class="card">
            <p><code>${created.shop_id}</code></p>
            <h2>${text(lang, 'api_key')}</h2>
            <code class="secret" id="new-api-key">${created.api_key}</code>
            ${CopyButton({ lang, target: 'new-api-key' })}
            <h2>${text(lang, 'webhook_secret')}</h2>
            <code class="secret" id="new-webhook-secret">${created.webhook_secret}</code>
            ${CopyButton({ lang, target: 'new-webhook-secret' })}
            <p><a href=${`/cabinet/shops/${created.shop_id}`}>${text(lang, 'to_shop')}</a></p>
          </section>
        `,
      });
    });

    app.get('/cabinet/shops/:shopId', READ, async (request, reply) => {
      const { lang, role, session } = cabinetOf(request);
      const shop = shopOf(request);
      const renamed = (request.query as Form).renamed === '1';
      const pages = SHOP_PAGES.filter(
        (page) => role && roleCan(role, page.permission) && (!page.sandboxOnly || shop.mode === 'sandbox'),
      );
      return sendPage(request, reply, http, {
        title: shop.name,
        notice: renamed ? { kind: 'ok', text: text(lang, 'renamed') } : undefined,
        children: html`
          <p><a href=${`/cabinet/shops?mode=${shop.mode}`}>${text(lang, 'all_shops')}</a></p>
          <h1>${shop.name} ${ModeBadge({ lang, mode: shop.mode })}</h1>
          <section class="card">
            <dl class="facts">
              <dt>${text(lang, 'id')}</dt>
              <dd><code>${shop.shopId}</code></dd>
              <dt>${text(lang, 'mode')}</dt>
              <dd>${text(lang, `mode_${shop.mode}`)}</dd>
            </dl>
          </section>
          <nav class="card" aria-label=${text(lang, 'sections')}>
            <h2>${text(lang, 'sections')}</h2>
            <ul>
              ${pages.map(
                (page) =>
                  html`<li><a href=${`/cabinet/shops/${shop.shopId}/${page.path}`}>${text(lang, page.label)}</a></li>`,
              )}
            </ul>
          </nav>
          ${role && canRename(role) ? RenameForm({ lang, csrf: session!.csrf_token, shop }) : null}
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/rename', MANAGE, async (request, reply) => {
      const { merchantId } = merchantOf(request);
      const shop = shopOf(request);
      const form = (request.body ?? {}) as Form;
      await renameShop(deps, {
        merchantId,
        shopId: shop.shopId,
        name: String(form.name ?? ''),
        actor: actorOf(request),
      });
      return redirectTo(reply, `/cabinet/shops/${shop.shopId}?renamed=1`);
    });
  };
}

function canRename(role: Role): boolean {
  return roleCan(role, 'shops.manage');
}

function CreateShopForm(props: { lang: Lang; csrf: string; mode: ShopProfile['mode'] }): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'create_shop')}</h2>
    <p class="muted">${text(lang, 'create_intro')}</p>
    <form method="post" action="/cabinet/shops">
      ${CsrfField({ token: props.csrf })}
      <label for="shop-name">${text(lang, 'name')}</label>
      <input id="shop-name" type="text" name="name" maxlength="200" required />
      <fieldset>
        <legend>${text(lang, 'mode')}</legend>
        ${(['sandbox', 'live'] as const).map(
          (mode) =>
            html`<label class="check"
              ><input type="radio" name="mode" value=${mode} checked=${mode === props.mode} />
              ${text(lang, `mode_${mode}`)}</label
            >`,
        )}
      </fieldset>
      <button type="submit">${text(lang, 'create')}</button>
    </form>
  </section>`;
}

function RenameForm(props: { lang: Lang; csrf: string; shop: ShopProfile }): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'rename')}</h2>
    <form method="post" action=${`/cabinet/shops/${props.shop.shopId}/rename`}>
      ${CsrfField({ token: props.csrf })}
      <label for="shop-new-name">${text(lang, 'new_name')}</label>
      <input id="shop-new-name" type="text" name="name" maxlength="200" required value=${props.shop.name} />
      <button type="submit">${text(lang, 'rename')}</button>
    </form>
  </section>`;
}
