// /cabinet/shops/:shopId/crypto: the shop's payout limits and tariff as the
// operator set them (read-only to the merchant), and links to the tables of
// crypto receiving (static wallets, invoices, deposits, refunds:
// receiving/receiving-routes.ts, where wallets are blocked and unblocked).
import type { FastifyInstance } from 'fastify';
import { payoutSettingsOf, type PayoutSettings } from '../../crypto/payouts/payout-settings.ts';
import { minimumDepositOfShop } from '../../crypto/receiving/deposit-dust.ts';
import { usdtText } from '../../crypto/receiving/receiving-views.ts';
import { cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { html } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import CRYPTO_TEXTS from './crypto-texts.json' with { type: 'json' };

const text = translator(CRYPTO_TEXTS);

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'crypto.read' as const } } } };

export function cryptoRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/crypto', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const [settings, minimumDeposit] = await Promise.all([
        payoutSettingsOf(deps.db, shop.shopId),
        minimumDepositOfShop(deps.db, shop.shopId),
      ]);
      const tables = ['wallets', 'invoices', 'deposits', 'refunds'] as const;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'crypto')} · ${shop.name}`,
        children: html`
          <h1>${text(lang, 'crypto')}</h1>
          <p class="muted">${shop.name} · <code>${shop.shopId}</code></p>
          ${PayoutSettingsCard({ lang, settings, minimumDeposit })}
          <section class="card">
            <h2>${text(lang, 'receiving')}</h2>
            <p class="muted">${text(lang, 'wallets_intro')}</p>
            <ul>
              ${tables.map(
                (table) =>
                  html`<li>
                    <a href=${`/cabinet/shops/${shop.shopId}/${table}`}>${text(lang, `table_${table}`)}</a>
                  </li>`,
              )}
            </ul>
          </section>
        `,
      });
    });
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
