// /cabinet/shops/:shopId/overview: the balances of the shop's book (the merchant's
// money in the shop's mode, shared by its shops of that mode) — available, reserved,
// incoming — and, for a range of UTC days (the last 30 unless chosen, at most 366),
// payments, deposits and payouts per day and the end-of-day balance: SVG charts
// drawn here, each with its table. Every number comes from the ledger
// (src/ledger/ledger-history.ts), so the charts agree with the balance.
import type { FastifyInstance } from 'fastify';
import {
  bookBalances,
  dailyHistory,
  type CurrencyBalance,
  type CurrencyHistory,
  type HistoryDay,
} from '../../ledger/ledger-history.ts';
import type { Asset as LedgerCurrency } from '../../money/asset.ts';
import { formatMinor } from '../../money/decimal.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { html, type View } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import { BarChart, DayTable, LineChart, type ChartPoint } from './overview-charts.ts';
import { parseDayRange, type DayRange } from './overview-range.ts';
import OVERVIEW_TEXTS from './overview-texts.json' with { type: 'json' };

const text = translator(OVERVIEW_TEXTS);
type TextKey = Parameters<typeof text>[1];

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'balances.read' as const } } } };

/** What a payout takes from the balance: its amount and its fee, reserved together. */
const PAYOUT_TYPES = ['payout', 'payout_fee'];

function sumOf(day: HistoryDay, types: readonly string[]): bigint {
  return types.reduce((total, type) => total + (day.byType.get(type) ?? 0n), 0n);
}

function pointsOf(history: CurrencyHistory, value: (day: HistoryDay) => bigint): ChartPoint[] {
  return history.days.map((day) => ({ day: day.day, value: value(day) }));
}

export function overviewRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/overview', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const query = request.query as { from?: unknown; to?: unknown };
      const now = deps.clock.now();
      const parsed = parseDayRange(query, now);
      // A bad range is refused with its reason, and the default range shown beside the form as typed.
      const fallback = parseDayRange({}, now);
      if (!fallback.ok) throw new Error('the default overview range is always valid');
      const range = parsed.ok ? parsed.range : fallback.range;
      const owner = { merchantId: shop.merchantId, book: shop.mode };
      const [balances, rub, usdt] = await Promise.all([
        bookBalances(deps.db, owner),
        dailyHistory(deps.db, owner, 'RUB', range),
        dailyHistory(deps.db, owner, 'USDT', range),
      ]);
      const typed = {
        from: typeof query.from === 'string' ? query.from.slice(0, 20) : range.from,
        to: typeof query.to === 'string' ? query.to.slice(0, 20) : range.to,
      };
      return sendPage(request, reply, http, {
        status: parsed.ok ? 200 : 400,
        title: `${text(lang, 'overview')} · ${shop.name}`,
        notice: parsed.ok ? undefined : { kind: 'error', text: text(lang, parsed.problem) },
        children: html`
          <h1>${text(lang, 'overview')}</h1>
          <p class="muted">${shop.name} · <code>${shop.shopId}</code></p>
          ${Balances({ lang, shop, balances })} ${RangeForm({ lang, shop, values: parsed.ok ? range : typed })}
          ${FlowCard({
            lang,
            id: 'payments',
            title: 'payments_chart',
            help: 'payments_help',
            currency: 'RUB',
            points: pointsOf(rub, (day) => sumOf(day, ['payment'])),
          })}
          ${FlowCard({
            lang,
            id: 'deposits',
            title: 'deposits_chart',
            help: 'deposits_help',
            currency: 'USDT',
            points: pointsOf(usdt, (day) => sumOf(day, ['deposit'])),
          })}
          ${FlowCard({
            lang,
            id: 'payouts',
            title: 'payouts_chart',
            help: 'payouts_help',
            currency: 'USDT',
            points: pointsOf(usdt, (day) => -sumOf(day, PAYOUT_TYPES)),
          })}
          ${BalanceCard({ lang, history: rub })} ${BalanceCard({ lang, history: usdt })}
        `,
      });
    });
  };
}

function money(value: bigint, currency: LedgerCurrency): string {
  return `${formatMinor(value, currency)} ${currency}`;
}

function Balances(props: { lang: Lang; shop: ShopProfile; balances: readonly CurrencyBalance[] }): View {
  const { lang } = props;
  return html`<section class="card" aria-labelledby="balances-heading">
    <h2 id="balances-heading">${text(lang, 'balances')}</h2>
    <p class="muted">${text(lang, props.shop.mode === 'live' ? 'balances_scope_live' : 'balances_scope_sandbox')}</p>
    <div class="table-wrap" tabindex="0" role="region" aria-labelledby="balances-heading">
      <table class="balances">
        <caption class="visually-hidden">
          ${text(lang, 'balances_caption')}
        </caption>
        <thead>
          <tr>
            <th scope="col">${text(lang, 'currency')}</th>
            <th scope="col" class="num">${text(lang, 'available')}</th>
            <th scope="col" class="num">${text(lang, 'reserved')}</th>
            <th scope="col" class="num">${text(lang, 'incoming')}</th>
          </tr>
        </thead>
        <tbody>
          ${props.balances.map(
            (balance) =>
              html`<tr data-currency=${balance.currency}>
                <th scope="row">${balance.currency}</th>
                <td class="num" data-field="available">${money(balance.available, balance.currency)}</td>
                <td class="num" data-field="reserved">${money(balance.reserved, balance.currency)}</td>
                <td class="num" data-field="incoming">${money(balance.incoming, balance.currency)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <p class="muted">${text(lang, 'balances_help')}</p>
  </section>`;
}

function RangeForm(props: { lang: Lang; shop: ShopProfile; values: Pick<DayRange, 'from' | 'to'> }): View {
  const { lang } = props;
  return html`<section class="card" aria-labelledby="range-heading">
    <h2 id="range-heading">${text(lang, 'range')}</h2>
    <form method="get" action=${`/cabinet/shops/${props.shop.shopId}/overview`} class="overview-range">
      <div>
        <label for="range-from">${text(lang, 'range_from')}</label>
        <input id="range-from" type="date" name="from" value=${props.values.from} />
      </div>
      <div>
        <label for="range-to">${text(lang, 'range_to')}</label>
        <input id="range-to" type="date" name="to" value=${props.values.to} />
      </div>
      <div><button type="submit">${text(lang, 'show')}</button></div>
    </form>
    <p class="muted">${text(lang, 'range_help')}</p>
  </section>`;
}

function FlowCard(props: {
  lang: Lang;
  id: string;
  title: TextKey;
  help: TextKey;
  currency: LedgerCurrency;
  points: readonly ChartPoint[];
}): View {
  const { lang, currency } = props;
  const title = text(lang, props.title);
  const total = props.points.reduce((sum, point) => sum + point.value, 0n);
  return html`<section class="card chart-card" id=${props.id} aria-labelledby=${`${props.id}-heading`}>
    <h2 id=${`${props.id}-heading`}>${title}</h2>
    <p class="muted">${text(lang, props.help)}</p>
    <p>${text(lang, 'total')}: <strong data-field="total">${money(total, currency)}</strong></p>
    ${BarChart({ label: `${text(lang, 'chart_of')}: ${title}`, currency, points: props.points })}
    <details>
      <summary>${text(lang, 'table_of')}: ${title}</summary>
      ${DayTable({
        caption: title,
        dayHeading: text(lang, 'day'),
        currency,
        days: props.points.map((point) => point.day),
        columns: [{ heading: text(lang, 'amount'), values: props.points.map((point) => point.value) }],
      })}
    </details>
  </section>`;
}

function BalanceCard(props: { lang: Lang; history: CurrencyHistory }): View {
  const { lang, history } = props;
  const { currency } = history;
  const title = text(lang, currency === 'RUB' ? 'balance_chart_RUB' : 'balance_chart_USDT');
  const id = `balance-${currency.toLowerCase()}`;
  const points = pointsOf(history, (day) => day.closing);
  return html`<section class="card chart-card" id=${id} aria-labelledby=${`${id}-heading`}>
    <h2 id=${`${id}-heading`}>${title}</h2>
    <p class="muted">${text(lang, 'balance_help')}</p>
    <p>${text(lang, 'opening')}: <strong data-field="opening">${money(history.opening, currency)}</strong></p>
    ${LineChart({ label: `${text(lang, 'chart_of')}: ${title}`, currency, points })}
    <details>
      <summary>${text(lang, 'table_of')}: ${title}</summary>
      ${DayTable({
        caption: title,
        dayHeading: text(lang, 'day'),
        currency,
        days: history.days.map((day) => day.day),
        columns: [
          { heading: text(lang, 'change'), values: history.days.map((day) => day.net) },
          { heading: text(lang, 'closing'), values: points.map((point) => point.value) },
        ],
      })}
    </details>
  </section>`;
}
