// /cabinet/shops/:shopId/crypto: the shop's payout limits and tariff as the
// operator set them (read-only to the merchant), and its static wallets, newest
// first, 50 a page, each blocked or unblocked through the receiving module's
// service (a money action: owners and finance enrol a second factor first),
// audited as wallet.blocked / wallet.unblocked in the same transaction.
import type { FastifyInstance } from 'fastify';
import { payoutSettingsOf, type PayoutSettings } from '../../crypto/payouts/payout-settings.ts';
import { minimumDepositOfShop } from '../../crypto/receiving/deposit-dust.ts';
import { usdtText } from '../../crypto/receiving/receiving-views.ts';
import { blockWallet, listWallets, unblockWallet, type WalletView } from '../../crypto/receiving/wallet-service.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import CRYPTO_TEXTS from './crypto-texts.json' with { type: 'json' };

const text = translator(CRYPTO_TEXTS);

const WALLETS_PER_PAGE = 50;
const WALLET_ID = /^wal_[0-9a-z]{26}$/;

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'crypto.read' as const } } } };
const MANAGE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'wallets.manage' as const, money: true } } },
};

function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

export function cryptoRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/crypto', READ, async (request, reply) => {
      const { lang, role, session } = cabinetOf(request);
      const shop = shopOf(request);
      const query = request.query as { cursor?: string; done?: string; wallet?: string };
      const [settings, minimumDeposit, wallets] = await Promise.all([
        payoutSettingsOf(deps.db, shop.shopId),
        minimumDepositOfShop(deps.db, shop.shopId),
        listWallets(deps, shop.shopId, { limit: WALLETS_PER_PAGE, cursor: query.cursor || undefined }),
      ]);
      const done = query.done === 'blocked' || query.done === 'unblocked' ? query.done : undefined;
      const notice =
        done && query.wallet && WALLET_ID.test(query.wallet)
          ? { kind: 'ok' as const, text: `${text(lang, `${done}_notice`)} ${query.wallet}` }
          : undefined;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'crypto')} · ${shop.name}`,
        notice,
        children: html`
          <h1>${text(lang, 'crypto')}</h1>
          <p class="muted">${shop.name} · <code>${shop.shopId}</code></p>
          ${PayoutSettingsCard({ lang, settings, minimumDeposit })}
          ${WalletList({
            lang,
            shopId: shop.shopId,
            wallets: wallets.data,
            nextCursor: wallets.next_cursor,
            firstPage: !query.cursor,
            cursor: query.cursor,
            manage: role !== undefined && roleCan(role, 'wallets.manage') ? session!.csrf_token : undefined,
          })}
        `,
      });
    });

    for (const [action, change] of [
      ['block', blockWallet],
      ['unblock', unblockWallet],
    ] as const) {
      app.post(`/cabinet/shops/:shopId/crypto/wallets/:walletId/${action}`, MANAGE, async (request, reply) => {
        const shop = shopOf(request);
        const { merchantId } = merchantOf(request);
        const { walletId } = request.params as { walletId: string };
        await change(deps, shop.shopId, walletId, { actor: actorOf(request), merchantId });
        const cursor = (request.body as { cursor?: unknown } | undefined)?.cursor;
        const back = typeof cursor === 'string' && cursor !== '' ? `&cursor=${encodeURIComponent(cursor)}` : '';
        return redirectTo(
          reply,
          `/cabinet/shops/${shop.shopId}/crypto?done=${action}ed&wallet=${encodeURIComponent(walletId)}${back}`,
        );
      });
    }
  };
}

function PayoutSettingsCard(props: { lang: Lang; settings: PayoutSettings; minimumDeposit: bigint }) {
  const { lang, settings } = props;
  return html`<section class="card">
    <h2>${text(lang, 'settings')}</h2>
    <p class="muted">${text(lang, 'settings_read_only')}</p>
    <dl class="facts">
      <dt>${text(lang, 'payouts')}</dt>
      <dd>${settings.enabled ? text(lang, 'payouts_on') : text(lang, 'payouts_off')}</dd>
      <dt>${text(lang, 'payout_min')}</dt>
      <dd>${usdtText(settings.minAmountMicro)} USDT</dd>
      <dt>${text(lang, 'payout_max')}</dt>
      <dd>${usdtText(settings.maxAmountMicro)} USDT</dd>
      <dt>${text(lang, 'fee_fixed')}</dt>
      <dd>${usdtText(settings.serviceFeeFixedMicro)} USDT</dd>
      <dt>${text(lang, 'fee_percent')}</dt>
      <dd>${(settings.serviceFeeBps / 100).toFixed(2)} %</dd>
      <dt>${text(lang, 'min_deposit')}</dt>
      <dd>${usdtText(props.minimumDeposit)} USDT</dd>
    </dl>
  </section>`;
}

function WalletList(props: {
  lang: Lang;
  shopId: string;
  wallets: WalletView[];
  nextCursor: string | null;
  firstPage: boolean;
  cursor: string | undefined;
  /** The CSRF token when the role may block and unblock. */
  manage: string | undefined;
}) {
  const { lang } = props;
  const base = `/cabinet/shops/${props.shopId}/crypto`;
  return html`<section class="card">
    <h2>${text(lang, 'wallets')}</h2>
    <p class="muted">${text(lang, 'wallets_intro')}</p>
    ${
      props.wallets.length === 0
        ? html`<p>${text(lang, 'no_wallets')}</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">${text(lang, 'client_id')}</th>
                  <th scope="col">${text(lang, 'address')}</th>
                  <th scope="col">${text(lang, 'status')}</th>
                  <th scope="col">${text(lang, 'received')}</th>
                  <th scope="col">${text(lang, 'held')}</th>
                  <th scope="col">${text(lang, 'created')}</th>
                  ${props.manage ? html`<th scope="col">${text(lang, 'actions')}</th>` : null}
                </tr>
              </thead>
              <tbody>
                ${props.wallets.map(
                  (wallet) =>
                    html`<tr data-wallet=${wallet.wallet_id}>
                      <td>${wallet.client_id}</td>
                      <td><code>${wallet.address}</code></td>
                      <td>
                        <span class=${`badge ${wallet.status}`}>${text(lang, `status_${wallet.status}`)}</span>
                      </td>
                      <td>${wallet.received_amount}</td>
                      <td>${wallet.held_amount}</td>
                      <td>${when(wallet.created_at)}</td>
                      ${
                        props.manage
                          ? html`<td>
                              ${WalletAction({
                                lang,
                                base,
                                wallet,
                                csrf: props.manage,
                                cursor: props.cursor,
                              })}
                            </td>`
                          : null
                      }
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <nav class="actions" aria-label=${text(lang, 'wallets')}>
      ${props.firstPage ? null : html`<a href=${base}>${text(lang, 'first_page')}</a>`}
      ${
        props.nextCursor
          ? html`<a href=${`${base}?cursor=${encodeURIComponent(props.nextCursor)}`}>${text(lang, 'next_page')}</a>`
          : null
      }
    </nav>
  </section>`;
}

function WalletAction(props: {
  lang: Lang;
  base: string;
  wallet: WalletView;
  csrf: string;
  cursor: string | undefined;
}) {
  const action = props.wallet.status === 'active' ? 'block' : 'unblock';
  return html`<form method="post" action=${`${props.base}/wallets/${props.wallet.wallet_id}/${action}`} class="inline">
    ${CsrfField({ token: props.csrf })}
    ${props.cursor ? html`<input type="hidden" name="cursor" value=${props.cursor} />` : null}
    <button
      type="submit"
      class=${action === 'block' ? 'danger' : 'secondary'}
      aria-label=${`${text(props.lang, action)} ${props.wallet.client_id}`}
    >
      ${text(props.lang, action)}
    </button>
  </form>`;
}
