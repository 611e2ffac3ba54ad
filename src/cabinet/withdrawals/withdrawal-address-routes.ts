// /cabinet/shops/:shopId/withdrawals/addresses: the merchant's withdrawal address
// book for the shop's book (sandbox/live). Everyone who sees balances sees it;
// owners and finance add (label + TRON address + a TOTP code in the same form)
// and remove. The domain (crypto/withdrawals/withdrawal-addresses.ts) validates,
// sets the cool-down and audits; this page mails the owners after the commit.
import type { FastifyInstance } from 'fastify';
import {
  addWithdrawalAddress,
  listWithdrawalAddresses,
  removeWithdrawalAddress,
  type WithdrawalAddressView,
} from '../../crypto/withdrawals/withdrawal-addresses.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { mailOwnersOfAddition, requireTotpCode } from './withdrawal-confirmation.ts';
import { CodeField, formField, text, when, withdrawalsPath } from './withdrawal-views.ts';

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'balances.read' as const } } } };
const MANAGE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'withdrawals.request' as const, money: true } } },
};

export function withdrawalAddressRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/withdrawals/addresses', READ, async (request, reply) => {
      const { lang, session } = cabinetOf(request);
      const shop = shopOf(request);
      const { merchantId, role } = merchantOf(request);
      const addresses = await listWithdrawalAddresses(deps, merchantId, shop.mode);
      const done = (request.query as { done?: string }).done;
      const notice =
        done === 'added' || done === 'removed' ? { kind: 'ok' as const, text: text(lang, `done_${done}`) } : undefined;
      const hours = Math.round(deps.config.withdrawalAddressCooldownMs / 3_600_000);
      return sendPage(request, reply, http, {
        title: `${text(lang, 'address_book')} · ${shop.name}`,
        notice,
        children: html`
          <p><a href=${withdrawalsPath(shop.shopId)}>${text(lang, 'back_to_list')}</a></p>
          <h1>${text(lang, 'address_book')}</h1>
          <p class="muted">${shop.name} · ${text(lang, `book_${shop.mode}`)}</p>
          <p>${text(lang, 'book_intro')} (${hours} ${text(lang, 'hours')})</p>
          ${AddressTable({
            lang,
            shopId: shop.shopId,
            addresses,
            csrf: roleCan(role, 'withdrawals.request') ? session!.csrf_token : undefined,
          })}
          ${roleCan(role, 'withdrawals.request') ? AddForm({ lang, shopId: shop.shopId, csrf: session!.csrf_token }) : null}
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/withdrawals/addresses', MANAGE, async (request, reply) => {
      const shop = shopOf(request);
      const { merchantId } = merchantOf(request);
      await requireTotpCode(deps, request, formField(request.body, 'code'));
      const actor = actorOf(request);
      const added = await addWithdrawalAddress(deps, {
        merchantId,
        mode: shop.mode,
        label: formField(request.body, 'label'),
        address: formField(request.body, 'address'),
        actor: { ...actor, label: actor.label ?? '' },
      });
      await mailOwnersOfAddition(deps, shop, added, actor.label ?? '');
      return redirectTo(reply, `${withdrawalsPath(shop.shopId)}/addresses?done=added`);
    });

    app.post('/cabinet/shops/:shopId/withdrawals/addresses/:addressId/remove', MANAGE, async (request, reply) => {
      const shop = shopOf(request);
      const { merchantId } = merchantOf(request);
      const { addressId } = request.params as { addressId: string };
      const actor = actorOf(request);
      await removeWithdrawalAddress(deps, { merchantId, addressId, actor: { ...actor, label: actor.label ?? '' } });
      return redirectTo(reply, `${withdrawalsPath(shop.shopId)}/addresses?done=removed`);
    });
  };
}

function AddressTable(props: {
  lang: Lang;
  shopId: string;
  addresses: WithdrawalAddressView[];
  csrf: string | undefined;
}): View {
  const { lang } = props;
  if (props.addresses.length === 0) return html`<section class="card"><p>${text(lang, 'no_addresses')}</p></section>`;
  return html`<section class="card">
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">${text(lang, 'label')}</th>
            <th scope="col">${text(lang, 'tron_address')}</th>
            <th scope="col">${text(lang, 'usable_from')}</th>
            <th scope="col">${text(lang, 'added_by')}</th>
            ${props.csrf ? html`<th scope="col">${text(lang, 'actions')}</th>` : null}
          </tr>
        </thead>
        <tbody>
          ${props.addresses.map(
            (entry) =>
              html`<tr data-address=${entry.address_id}>
                <td>${entry.label}</td>
                <td><code>${entry.address}</code></td>
                <td>
                  ${when(entry.usable_from)}
                  <span class=${`badge ${entry.usable ? 'usable' : 'cooling'}`}
                    >${text(lang, entry.usable ? 'usable' : 'cooling')}</span
                  >
                </td>
                <td>${entry.added_by}</td>
                ${
                  props.csrf
                    ? html`<td>
                        <form
                          method="post"
                          class="inline"
                          action=${`${withdrawalsPath(props.shopId)}/addresses/${entry.address_id}/remove`}
                        >
                          ${CsrfField({ token: props.csrf })}
                          <button type="submit" class="danger" aria-label=${`${text(lang, 'remove')} ${entry.label}`}>
                            ${text(lang, 'remove')}
                          </button>
                        </form>
                      </td>`
                    : null
                }
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function AddForm(props: { lang: Lang; shopId: string; csrf: string }): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'add')}</h2>
    <form method="post" action=${`${withdrawalsPath(props.shopId)}/addresses`}>
      ${CsrfField({ token: props.csrf })}
      <label for="address-label">${text(lang, 'label')}</label>
      <input id="address-label" name="label" type="text" maxlength="100" required />
      <label for="address-value">${text(lang, 'tron_address')}</label>
      <input
        id="address-value"
        name="address"
        type="text"
        maxlength="64"
        autocomplete="off"
        spellcheck="false"
        required
      />
      ${CodeField({ lang, id: 'address-code' })}
      <button type="submit">${text(lang, 'add')}</button>
    </form>
  </section>`;
}
