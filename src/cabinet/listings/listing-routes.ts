// The page and the download of a table (listing.ts): GET /cabinet/shops/:shopId/<path>
// shows the filter form, one keyset page of rows newest first with a link to each
// row's own page, and the export form; GET …/<path>.csv and …/<path>.xlsx stream
// every filtered row (exports.create, recorded in the audit log as `export.downloaded`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../../audit/audit-service.ts';
import type { ListPage } from '../../db/list-page.ts';
import { InvalidRequestError } from '../../errors.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { actorOf, CabinetPageError, cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import { filterValuesOf, parseListingFilter, queryOf, type FilterValues, type Listing } from './listing.ts';
import { chosenColumns, everyPage } from './listing-csv.ts';
import { DOWNLOAD_FORMATS, sendDownload, type DownloadFormat } from './listing-download.ts';
import LISTING_TEXTS from './listing-texts.json' with { type: 'json' };

const listingText = translator(LISTING_TEXTS);
const text = listingText;

export const LISTING_PAGE_ROWS = 50;

function cursorOf(request: FastifyRequest): string | undefined {
  const cursor = (request.query as Record<string, unknown> | undefined)?.cursor;
  return typeof cursor === 'string' && cursor !== '' ? cursor : undefined;
}

function listingShopOf<Row>(request: FastifyRequest, listing: Listing<Row>): ShopProfile {
  const shop = shopOf(request);
  if (listing.appliesTo && !listing.appliesTo(shop)) throw new CabinetPageError(404, 'not_found');
  return shop;
}

/** Registers the table's page and its CSV and XLSX downloads. */
export function installListing<Row>(
  app: FastifyInstance,
  deps: CabinetDeps,
  http: CabinetHttpDeps,
  listing: Listing<Row>,
) {
  const base = (shopId: string) => `/cabinet/shops/${shopId}/${listing.path}`;
  const pageOptions = {
    schema: { hide: true },
    config: { cabinet: { access: { permission: listing.permission } } },
  };
  const exportOptions = {
    schema: { hide: true },
    config: { cabinet: { access: { permission: 'exports.create' as const, alsoPermission: listing.permission } } },
  };

  app.get(`/cabinet/shops/:shopId/${listing.path}`, pageOptions, async (request, reply) => {
    const { lang, role } = cabinetOf(request);
    const shop = listingShopOf(request, listing);
    const values = filterValuesOf(request.query);
    const cursor = cursorOf(request);
    const props = {
      lang,
      listing,
      base: base(shop.shopId),
      values,
      paged: cursor !== undefined,
      canExport: role !== undefined && roleCan(role, 'exports.create'),
    };
    let page: ListPage<Row>;
    try {
      page = await listing.read(shop, parseListingFilter(listing, values), { limit: LISTING_PAGE_ROWS, cursor });
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      return sendPage(request, reply, http, {
        status: 400,
        title: `${listing.title(lang)} · ${shop.name}`,
        notice: { kind: 'error', text: `${text(lang, 'bad_filter')} ${error.message}` },
        children: ListingPage({ ...props, shop, page: undefined }),
      });
    }
    return sendPage(request, reply, http, {
      title: `${listing.title(lang)} · ${shop.name}`,
      children: ListingPage({ ...props, shop, page }),
    });
  });

  for (const format of DOWNLOAD_FORMATS) {
    app.get(`/cabinet/shops/:shopId/${listing.path}.${format}`, exportOptions, async (request, reply) => {
      return sendExport(request, reply, deps, listing, format);
    });
  }
}

/** A table's download; the access rule has checked both the table's permission and exports.create. */
async function sendExport<Row>(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: CabinetDeps,
  listing: Listing<Row>,
  format: DownloadFormat,
) {
  const shop = listingShopOf(request, listing);
  const values = filterValuesOf(request.query);
  const filter = parseListingFilter(listing, values);
  const columns = chosenColumns(listing, (request.query as Record<string, unknown>).columns);
  await recordAudit(deps.db, deps.clock, {
    actor: actorOf(request),
    action: 'export.downloaded',
    merchantId: shop.merchantId,
    shopId: shop.shopId,
    target: listing.path,
    details: {
      format,
      filters: Object.fromEntries(Object.entries(values).filter(([, value]) => value !== '')),
      columns: columns.map((column) => column.key),
    },
  });
  const day = deps.clock.now().toISOString().slice(0, 10);
  return sendDownload(reply, {
    format,
    // `payouts/batches` names its file `payouts-batches-…`.
    name: `${listing.path.replaceAll('/', '-')}-${shop.shopId}-${day}`,
    sheetName: listing.path.replaceAll('/', '-'),
    columns,
    pages: everyPage(listing, shop, filter),
  });
}

interface ListingPageProps<Row> {
  readonly lang: Lang;
  readonly listing: Listing<Row>;
  readonly shop: ShopProfile;
  readonly base: string;
  readonly values: FilterValues;
  /** Absent when the filter was refused. */
  readonly page: ListPage<Row> | undefined;
  readonly paged: boolean;
  readonly canExport: boolean;
}

function ListingPage<Row>(props: ListingPageProps<Row>): View {
  const { lang, listing, shop } = props;
  return html`
    <p><a href=${`/cabinet/shops/${shop.shopId}`}>${shop.name}</a></p>
    <h1>${listing.title(lang)}</h1>
    ${FilterForm(props)} ${props.page ? RowTable({ ...props, page: props.page }) : null}
    ${props.page ? Pages({ ...props, page: props.page }) : null} ${props.canExport ? ExportForm(props) : null}
  `;
}

function FilterForm<Row>(props: ListingPageProps<Row>): View {
  const { lang, listing, values } = props;
  const id = (field: string) => `${listing.path}-${field}`;
  return html`<form method="get" action=${props.base} class="card listing-filters" aria-label=${text(lang, 'filters')}>
    <h2>${text(lang, 'filters')}</h2>
    <div class="listing-fields">
      <div>
        <label for=${id('status')}>${text(lang, 'status')}</label>
        <select id=${id('status')} name="status">
          <option value="" selected=${values.status === ''}>${text(lang, 'any_status')}</option>
          ${listing.statuses.map(
            (status) => html`<option value=${status} selected=${values.status === status}>${status}</option>`,
          )}
        </select>
      </div>
      <div>
        <label for=${id('from')}>${text(lang, 'from')}</label>
        <input id=${id('from')} type="date" name="from" value=${values.from} />
      </div>
      <div>
        <label for=${id('to')}>${text(lang, 'to')}</label>
        <input id=${id('to')} type="date" name="to" value=${values.to} />
      </div>
      ${(['amount_min', 'amount_max'] as const).map((field) =>
        listing.amountAsset
          ? html`<div>
              <label for=${id(field)}>${text(lang, field)} (${listing.amountAsset})</label>
              <input
                id=${id(field)}
                type="text"
                inputmode="decimal"
                name=${field}
                value=${values[field]}
                maxlength="30"
              />
            </div>`
          : null,
      )}
      ${
        listing.searchHint
          ? html`<div>
              <label for=${id('q')}>${text(lang, 'search')}</label>
              <input
                id=${id('q')}
                type="search"
                name="q"
                value=${values.q}
                maxlength="200"
                aria-describedby=${id('q-hint')}
              />
              <p id=${id('q-hint')} class="muted">${listing.searchHint(lang)}</p>
            </div>`
          : null
      }
    </div>
    <div class="actions">
      <button type="submit">${text(lang, 'apply')}</button>
      <a class="button secondary" href=${props.base}>${text(lang, 'reset')}</a>
    </div>
  </form>`;
}

function RowTable<Row>(props: ListingPageProps<Row> & { page: ListPage<Row> }): View {
  const { lang, listing } = props;
  const columns = listing.columns.filter((column) => column.onPage !== false);
  if (props.page.data.length === 0) return html`<p class="card">${text(lang, 'nothing')}</p>`;
  return html`<div class="table-wrap card">
    <table class="listing-table">
      <caption class="visually-hidden">
        ${listing.title(lang)}
      </caption>
      <thead>
        <tr>
          ${columns.map((column) => html`<th scope="col">${column.label(lang)}</th>`)}
          ${listing.detailPath ? html`<th scope="col"><span class="visually-hidden">${text(lang, 'open')}</span></th>` : null}
        </tr>
      </thead>
      <tbody>
        ${props.page.data.map(
          (row) =>
            html`<tr>
              ${columns.map((column) => html`<td>${column.cell ? column.cell(row, lang) : column.text(row)}</td>`)}
              ${
                listing.detailPath
                  ? html`<td>
                      <a href=${`/cabinet/shops/${props.shop.shopId}/${listing.detailPath(row)}`}
                        >${text(lang, 'open')}</a
                      >
                    </td>`
                  : null
              }
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function Pages<Row>(props: ListingPageProps<Row> & { page: ListPage<Row> }): View {
  const { lang } = props;
  const next = props.page.next_cursor;
  if (!props.paged && !next) return null;
  return html`<nav class="actions" aria-label=${text(lang, 'pages')}>
    ${props.paged ? html`<a href=${`${props.base}${queryOf(props.values)}`}>${text(lang, 'first_page')}</a>` : null}
    ${next ? html`<a href=${`${props.base}${queryOf(props.values, { cursor: next })}`}>${text(lang, 'next_page')}</a>` : null}
  </nav>`;
}

function ExportForm<Row>(props: ListingPageProps<Row>): View {
  const { lang, listing, values } = props;
  // Two submit buttons choose the format (formaction), so the choice needs no script.
  return html`<form method="get" action=${`${props.base}.csv`} class="card listing-export">
    <h2>${text(lang, 'export')}</h2>
    <p class="muted">${text(lang, 'export_intro')}</p>
    ${Object.entries(values).map(([field, value]) =>
      value ? html`<input type="hidden" name=${field} value=${value} />` : null,
    )}
    <fieldset>
      <legend>${text(lang, 'columns')}</legend>
      <div class="listing-columns">
        ${listing.columns.map(
          (column) =>
            html`<label class="check">
              <input type="checkbox" name="columns" value=${column.key} />
              ${column.label(lang)} <code>${column.key}</code>
            </label>`,
        )}
      </div>
    </fieldset>
    <div class="actions">
      <button type="submit" formaction=${`${props.base}.csv`}>${text(lang, 'download_csv')}</button>
      <button type="submit" formaction=${`${props.base}.xlsx`}>${text(lang, 'download_xlsx')}</button>
    </div>
  </form>`;
}
