// /cabinet/shops/:shopId/accounting: the accounting export's page — a form of
// days and the meaning of each column — and …/accounting.csv and .xlsx, every
// ledger entry of the merchant's accounts in the shop's book over those days,
// streamed (accounting-export.ts). exports.create; each download is audited
// (`export.downloaded`, target `accounting`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../../audit/audit-service.ts';
import { actorOf, cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { filterValuesOf, parseListingFilter, type FilterValues } from '../listings/listing.ts';
import { DOWNLOAD_FORMATS, sendDownload, type DownloadFormat } from '../listings/listing-download.ts';
import { html, type View } from '../views/html.ts';
import type { Lang } from '../views/cabinet-language.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { ACCOUNTING_COLUMNS, accountingPages, accountingText as text } from './accounting-export.ts';

const EXPORTS = { schema: { hide: true }, config: { cabinet: { access: { permission: 'exports.create' as const } } } };

/** The days of the query (`from`, `to`, UTC, both inclusive); anything else in it is ignored. */
function rangeOf(request: FastifyRequest) {
  const typed = filterValuesOf(request.query);
  const values: FilterValues = { ...typed, status: '', amount_min: '', amount_max: '', q: '' };
  const filter = parseListingFilter({ statuses: [], amountAsset: undefined }, values);
  return { values, from: filter.createdFrom, before: filter.createdBefore };
}

async function sendAccounting(request: FastifyRequest, reply: FastifyReply, deps: CabinetDeps, format: DownloadFormat) {
  const shop = shopOf(request);
  const range = rangeOf(request);
  await recordAudit(deps.db, deps.clock, {
    actor: actorOf(request),
    action: 'export.downloaded',
    merchantId: shop.merchantId,
    shopId: shop.shopId,
    target: 'accounting',
    details: {
      format,
      filters: Object.fromEntries(
        Object.entries({ from: range.values.from, to: range.values.to }).filter(([, value]) => value !== ''),
      ),
    },
  });
  const day = deps.clock.now().toISOString().slice(0, 10);
  return sendDownload(reply, {
    format,
    name: `accounting-${shop.shopId}-${day}`,
    sheetName: 'accounting',
    columns: ACCOUNTING_COLUMNS,
    pages: accountingPages(deps.db, shop, { from: range.from, before: range.before }),
  });
}

export function accountingRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/accounting', EXPORTS, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      return sendPage(request, reply, http, {
        title: `${text(lang, 'title')} · ${shop.name}`,
        children: AccountingPage({ lang, shop }),
      });
    });
    for (const format of DOWNLOAD_FORMATS) {
      app.get(`/cabinet/shops/:shopId/accounting.${format}`, EXPORTS, async (request, reply) =>
        sendAccounting(request, reply, deps, format),
      );
    }
  };
}

function AccountingPage(props: { lang: Lang; shop: ShopProfile }): View {
  const { lang, shop } = props;
  const base = `/cabinet/shops/${shop.shopId}/accounting`;
  return html`
    <p><a href=${`/cabinet/shops/${shop.shopId}`}>${shop.name}</a></p>
    <h1>${text(lang, 'title')}</h1>
    <p>${text(lang, 'intro')}</p>
    <form method="get" action=${`${base}.csv`} class="card">
      <fieldset>
        <legend>${text(lang, 'range')}</legend>
        <div class="listing-fields">
          <div>
            <label for="accounting-from">${text(lang, 'from')}</label>
            <input id="accounting-from" type="date" name="from" aria-describedby="accounting-range-hint" />
          </div>
          <div>
            <label for="accounting-to">${text(lang, 'to')}</label>
            <input id="accounting-to" type="date" name="to" aria-describedby="accounting-range-hint" />
          </div>
        </div>
        <p id="accounting-range-hint" class="muted">${text(lang, 'range_hint')}</p>
      </fieldset>
      <div class="actions">
        <button type="submit" formaction=${`${base}.csv`}>${text(lang, 'download_csv')}</button>
        <button type="submit" formaction=${`${base}.xlsx`}>${text(lang, 'download_xlsx')}</button>
      </div>
    </form>
    <section class="card">
      <h2>${text(lang, 'columns')}</h2>
      <p>${text(lang, 'order')}</p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">${text(lang, 'column')}</th>
              <th scope="col">${text(lang, 'meaning')}</th>
            </tr>
          </thead>
          <tbody>
            ${ACCOUNTING_COLUMNS.map(
              (column) =>
                html`<tr>
                  <th scope="row"><code>${column.key}</code><br />${column.label(lang)}</th>
                  <td>${column.describe(lang)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>
  `;
}
