// /cabinet/audit: the merchant's audit log (docs/cabinet.md, "The audit log") — a table of
// its events newest first, a GET form of filters, keyset pages — and
// /cabinet/audit.csv, the same filters as a CSV download. Owners, admins and
// finance see it ('audit.read'); an export is itself recorded.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditCsv } from '../../audit/audit-csv.ts';
import {
  auditEventsForExport,
  listAuditEvents,
  parseAuditFilter,
  recordAudit,
  type AuditActorKind,
  type AuditEventRow,
  type AuditFilterForm,
} from '../../audit/audit-service.ts';
import type { ListPage } from '../../db/list-page.ts';
import { InvalidRequestError } from '../../errors.ts';
import { shopsOfMerchant, type ShopProfile } from '../../merchants/merchant-service.ts';
import { actorOf, cabinetOf, merchantOf, sendPage, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan, type Permission, type Role } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import AUDIT_TEXTS from './audit-texts.json' with { type: 'json' };

const text = translator(AUDIT_TEXTS);
const AUDIT_READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'audit.read' as const } } } };
const PAGE_ROWS = 50;
const FILTER_FIELDS = ['action', 'actor', 'shop', 'from', 'to'] as const;
const USER_AGENT_SHOWN = 40;
const DETAILS_SHOWN = 200;

type FilterValues = { -readonly [Field in keyof AuditFilterForm]-?: string };

/** The filter fields of the query string as typed (a repeated field counts once; absent is empty). */
function filterValues(request: FastifyRequest): FilterValues {
  const query = request.query as Record<string, unknown>;
  const single = (value: unknown): string => (typeof value === 'string' ? value : '');
  return Object.fromEntries(FILTER_FIELDS.map((field) => [field, single(query[field])])) as FilterValues;
}

/** The query string of these filters (empty ones left out), with a cursor when given. */
function queryOf(values: FilterValues, cursor?: string): string {
  const params = new URLSearchParams();
  for (const field of FILTER_FIELDS) if (values[field].trim() !== '') params.set(field, values[field].trim());
  if (cursor) params.set('cursor', cursor);
  const query = params.toString();
  return query ? `?${query}` : '';
}

function when(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

function shortened(value: string, length: number): string {
  return value.length > length ? `${value.slice(0, length - 1)}…` : value;
}

/** `key: value, …`: strings as they are, anything else as JSON. */
function compactDetails(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}

const KIND_TEXT: Readonly<Record<AuditActorKind, Parameters<typeof text>[1]>> = {
  user: 'kind_user',
  api_key: 'kind_api_key',
  operator: 'kind_operator',
  system: 'kind_system',
};

/**
 * Details a role may not read elsewhere stay hidden here too: an action's
 * details are shown only to roles holding the permission of the area that made
 * it (finance reads the audit log but not the webhook settings, so not the
 * endpoint URLs a change recorded).
 */
const DETAILS_PERMISSION: ReadonlyArray<readonly [prefix: string, permission: Permission]> = [
  ['webhook.', 'webhooks.read'],
  ['key.', 'keys.read'],
];

function readableBy(role: Role, event: AuditEventRow): AuditEventRow {
  const rule = DETAILS_PERMISSION.find(([prefix]) => event.action.startsWith(prefix));
  return !rule || roleCan(role, rule[1]) ? event : { ...event, details: { hidden: true } };
}

async function* readableEvents(role: Role, events: AsyncIterable<AuditEventRow>): AsyncGenerator<AuditEventRow> {
  for await (const event of events) yield readableBy(role, event);
}

export function auditRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/audit', AUDIT_READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const { merchantId, role } = merchantOf(request);
      const values = filterValues(request);
      const cursor = (request.query as Record<string, unknown>).cursor;
      const shops = await shopsOfMerchant(deps.db, merchantId);
      let page: ListPage<AuditEventRow>;
      try {
        const filter = parseAuditFilter(merchantId, values);
        const listed = await listAuditEvents(deps.db, filter, {
          limit: PAGE_ROWS,
          cursor: typeof cursor === 'string' && cursor !== '' ? cursor : undefined,
        });
        page = { ...listed, data: listed.data.map((event) => readableBy(role, event)) };
      } catch (error) {
        if (!(error instanceof InvalidRequestError)) throw error;
        return sendPage(request, reply, http, {
          status: 400,
          title: text(lang, 'audit'),
          notice: { kind: 'error', text: text(lang, 'bad_filter') },
          children: AuditPage({ lang, values, shops, page: undefined, paged: false }),
        });
      }
      return sendPage(request, reply, http, {
        title: text(lang, 'audit'),
        children: AuditPage({ lang, values, shops, page, paged: typeof cursor === 'string' && cursor !== '' }),
      });
    });

    app.get('/cabinet/audit.csv', AUDIT_READ, async (request, reply) => {
      const { merchantId, role } = merchantOf(request);
      const values = filterValues(request);
      const filter = parseAuditFilter(merchantId, values);
      const filled = Object.fromEntries(Object.entries(values).filter(([, value]) => value.trim() !== ''));
      await recordAudit(deps.db, deps.clock, {
        actor: actorOf(request),
        action: 'audit.exported',
        merchantId,
        details: { filters: filled },
      });
      const day = deps.clock.now().toISOString().slice(0, 10);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="audit-${merchantId}-${day}.csv"`)
        .send(auditCsv(readableEvents(role, auditEventsForExport(deps.db, filter))));
    });
  };
}

interface AuditPageProps {
  readonly lang: Lang;
  readonly values: FilterValues;
  readonly shops: readonly ShopProfile[];
  /** Absent when the filters were refused. */
  readonly page: ListPage<AuditEventRow> | undefined;
  /** Whether this page is past the first. */
  readonly paged: boolean;
}

function AuditPage(props: AuditPageProps): View {
  const { lang } = props;
  return html`
    <h1>${text(lang, 'audit')}</h1>
    <p class="muted">${text(lang, 'intro')}</p>
    ${FilterForm(props)} ${props.page ? EventTable({ lang, events: props.page.data }) : null}
    ${props.page ? Pages({ lang, values: props.values, page: props.page, paged: props.paged }) : null}
  `;
}

function FilterForm(props: AuditPageProps): View {
  const { lang, values } = props;
  return html`<form method="get" action="/cabinet/audit" class="card audit-filters" aria-label=${text(lang, 'filters')}>
    <h2>${text(lang, 'filters')}</h2>
    <div class="audit-fields">
      <div>
        <label for="audit-action">${text(lang, 'action')}</label>
        <input
          id="audit-action"
          type="text"
          name="action"
          value=${values.action}
          maxlength="100"
          aria-describedby="audit-action-hint"
        />
        <p id="audit-action-hint" class="muted">${text(lang, 'action_hint')}</p>
      </div>
      <div>
        <label for="audit-actor">${text(lang, 'actor')}</label>
        <input
          id="audit-actor"
          type="text"
          name="actor"
          value=${values.actor}
          maxlength="320"
          aria-describedby="audit-actor-hint"
        />
        <p id="audit-actor-hint" class="muted">${text(lang, 'actor_hint')}</p>
      </div>
      <div>
        <label for="audit-shop">${text(lang, 'shop')}</label>
        <select id="audit-shop" name="shop">
          <option value="" selected=${values.shop === ''}>${text(lang, 'all_shops')}</option>
          ${props.shops.map(
            (shop) =>
              html`<option value=${shop.shopId} selected=${values.shop === shop.shopId}>
                ${shop.name} (${shop.mode})
              </option>`,
          )}
        </select>
      </div>
      <div>
        <label for="audit-from">${text(lang, 'from')}</label>
        <input id="audit-from" type="date" name="from" value=${values.from} placeholder=${text(lang, 'day_hint')} />
      </div>
      <div>
        <label for="audit-to">${text(lang, 'to')}</label>
        <input id="audit-to" type="date" name="to" value=${values.to} placeholder=${text(lang, 'day_hint')} />
      </div>
    </div>
    <div class="actions">
      <button type="submit">${text(lang, 'apply')}</button>
      <a class="button secondary" href="/cabinet/audit">${text(lang, 'reset')}</a>
      <a class="button secondary" href=${`/cabinet/audit.csv${queryOf(values)}`}>${text(lang, 'download_csv')}</a>
    </div>
    <p class="muted">${text(lang, 'csv_note')}</p>
  </form>`;
}

function EventTable(props: { lang: Lang; events: readonly AuditEventRow[] }): View {
  const { lang } = props;
  if (props.events.length === 0) return html`<section class="card"><p>${text(lang, 'none')}</p></section>`;
  return html`<section class="card" aria-labelledby="audit-events">
    <h2 id="audit-events">${text(lang, 'events')}</h2>
    <div class="table-wrap" tabindex="0" role="region" aria-labelledby="audit-events">
      <table class="audit-events">
        <thead>
          <tr>
            <th scope="col">${text(lang, 'time')}</th>
            <th scope="col">${text(lang, 'who')}</th>
            <th scope="col">${text(lang, 'action')}</th>
            <th scope="col">${text(lang, 'target')}</th>
            <th scope="col">${text(lang, 'address')}</th>
            <th scope="col">${text(lang, 'browser')}</th>
            <th scope="col">${text(lang, 'details')}</th>
          </tr>
        </thead>
        <tbody>
          ${props.events.map((event) => EventRow({ lang, event }))}
        </tbody>
      </table>
    </div>
  </section>`;
}

function EventRow(props: { lang: Lang; event: AuditEventRow }): View {
  const { lang, event } = props;
  const details = compactDetails(event.details);
  return html`<tr>
    <td class="audit-time">${when(event.created_at)}</td>
    <td>
      ${event.actor_label || event.actor_id || '—'}
      <br /><span class="muted">${text(lang, KIND_TEXT[event.actor_kind])}</span>
    </td>
    <td><code>${event.action}</code></td>
    <td>${event.target ? html`<code>${event.target}</code>` : '—'}</td>
    <td>${event.ip ? html`<code>${event.ip}</code>` : '—'}</td>
    <td title=${event.user_agent || undefined}>
      ${event.user_agent ? shortened(event.user_agent, USER_AGENT_SHOWN) : '—'}
    </td>
    <td>${details ? shortened(details, DETAILS_SHOWN) : '—'}</td>
  </tr>`;
}

function Pages(props: { lang: Lang; values: FilterValues; page: ListPage<AuditEventRow>; paged: boolean }): View {
  const { lang, page } = props;
  if (!props.paged && page.next_cursor === null) return null;
  return html`<nav class="actions" aria-label=${text(lang, 'pages')}>
    ${props.paged ? html`<a href=${`/cabinet/audit${queryOf(props.values)}`}>${text(lang, 'newest')}</a>` : null}
    ${
      page.next_cursor === null
        ? null
        : html`<a href=${`/cabinet/audit${queryOf(props.values, page.next_cursor)}`} rel="next"
            >${text(lang, 'older')}</a
          >`
    }
  </nav>`;
}
