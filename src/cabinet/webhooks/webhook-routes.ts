// /cabinet/shops/:shopId/webhooks: a shop's webhook endpoint, its delivery log
// (events newest first, each with every attempt), test sends and resends, and the
// signing secret (reveal, rotate) behind step-up. Everything goes through the
// webhooks module's service, as the API does; each change is audited there, in
// its own transaction.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../../errors.ts';
import { createWebhookSender } from '../../webhooks/webhook-sender.ts';
import { webhookMetrics } from '../../webhooks/webhook-metrics.ts';
import {
  eventSubjects,
  getEndpointSettings,
  getEvent,
  listAttempts,
  listEvents,
  resendEvent,
  resendFailedSince,
  revealSecret,
  rotateSecret,
  sendTestEvent,
  setEndpoint,
  type WebhookAttemptView,
  type WebhookChanger,
  type WebhookEventView,
} from '../../webhooks/webhook-service.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan, type Permission } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { CopyButton, CsrfField } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import { installListing } from '../listings/listing-routes.ts';
import { webhookEventListing } from './webhook-event-listing.ts';
import WEBHOOK_TEXTS from './webhook-texts.json' with { type: 'json' };

const text = translator(WEBHOOK_TEXTS);

const LOG_PAGE_SIZE = 50;
const ATTEMPTS_PAGE_SIZE = 100;
const RESPONSE_EXCERPT_CHARS = 500;
const STATUSES = ['pending', 'delivered', 'failed', 'no_destination'] as const;
type Status = (typeof STATUSES)[number];

function access(permission: Permission, stepUp = false) {
  return { schema: { hide: true }, config: { cabinet: { access: { permission, stepUp } } } };
}

function when(iso: string | Date): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function base(shopId: string): string {
  return `/cabinet/shops/${encodeURIComponent(shopId)}/webhooks`;
}

/** The signed-in user, for the audit row the service writes with the change. */
function changerOf(request: FastifyRequest): WebhookChanger {
  return { actor: actorOf(request), merchantId: merchantOf(request).merchantId };
}

function isStatus(value: unknown): value is Status {
  return typeof value === 'string' && (STATUSES as readonly string[]).includes(value);
}

/** A datetime-local value ("2026-11-01T10:00"), read as UTC. */
function parseSince(value: unknown, lang: Lang): Date {
  const match = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?$/.test(value);
  const date = match ? new Date(`${value as string}Z`) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new InvalidRequestError(text(lang, 'since_invalid'));
  return date;
}

function field(request: FastifyRequest, name: string): string | undefined {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

export function webhookRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    const sender = createWebhookSender({ config: deps.config });
    const metrics = webhookMetrics(deps);
    app.addHook('onClose', () => sender.close());
    installListing(app, deps, http, webhookEventListing(deps));

    app.get('/cabinet/shops/:shopId/webhooks', access('webhooks.read'), async (request, reply) => {
      const { lang, session } = cabinetOf(request);
      const shop = shopOf(request);
      const query = request.query as Record<string, string | undefined>;
      const status = isStatus(query.status) ? query.status : undefined;
      const [settings, events] = await Promise.all([
        getEndpointSettings(deps, shop.shopId),
        listEvents(deps, shop.shopId, { status, limit: LOG_PAGE_SIZE, cursor: query.cursor || undefined }),
      ]);
      const { role } = merchantOf(request);
      const csrf = session!.csrf_token;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'webhooks')} · ${shop.name}`,
        notice: listNotice(lang, query),
        children: html`
          <h1>${text(lang, 'webhooks')} · ${shop.name}</h1>
          ${EndpointCard({
            lang,
            shopId: shop.shopId,
            url: settings.url,
            previousUntil: settings.previousSecretExpiresAt,
            manage: roleCan(role, 'webhooks.manage'),
            secret: roleCan(role, 'webhooks.secret'),
            csrf,
          })}
          ${roleCan(role, 'webhooks.manage') ? ResendFailedCard({ lang, shopId: shop.shopId, csrf }) : null}
          ${DeliveryLog({ lang, shopId: shop.shopId, status, events: events.data, next: events.next_cursor, first: !query.cursor })}
        `,
      });
    });

    app.get('/cabinet/shops/:shopId/webhooks/events/:eventId', access('webhooks.read'), async (request, reply) => {
      const { lang, session } = cabinetOf(request);
      const shop = shopOf(request);
      const { eventId } = request.params as { eventId: string };
      const query = request.query as Record<string, string | undefined>;
      const event = await getEvent(deps, shop.shopId, eventId);
      const [attempts, subjects] = await Promise.all([
        allAttempts(deps, shop.shopId, eventId),
        eventSubjects(deps, shop.shopId, eventId),
      ]);
      const notice =
        query.resent === '1'
          ? { kind: 'ok' as const, text: text(lang, 'resent') }
          : query.test === 'succeeded'
            ? { kind: 'ok' as const, text: text(lang, 'test_sent') }
            : query.test !== undefined
              ? { kind: 'error' as const, text: text(lang, 'test_failed') }
              : undefined;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'event')} ${event.id}`,
        notice,
        children: html`
          <p>
            <a href=${base(shop.shopId)}>${text(lang, 'back_to_webhooks')}</a> ·
            <a href=${`${base(shop.shopId)}/events`}>${text(lang, 'back_to_events')}</a>
          </p>
          <h1>${text(lang, 'event')} <code>${event.id}</code></h1>
          ${EventCard({
            lang,
            shopId: shop.shopId,
            event,
            subjects,
            manage: roleCan(merchantOf(request).role, 'webhooks.manage'),
            csrf: session!.csrf_token,
          })}
          ${AttemptTable({ lang, attempts })}
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/webhooks/endpoint', access('webhooks.manage'), async (request, reply) => {
      const shop = shopOf(request);
      const url = (field(request, 'url') ?? '').trim();
      await setEndpoint(deps, shop.shopId, url === '' ? null : url, changerOf(request));
      return redirectTo(reply, `${base(shop.shopId)}?endpoint=${url === '' ? 'cleared' : 'saved'}`);
    });

    app.post('/cabinet/shops/:shopId/webhooks/test', access('webhooks.manage'), async (request, reply) => {
      const shop = shopOf(request);
      const sent = await sendTestEvent({ ...deps, sender, metrics }, shop.shopId, undefined, changerOf(request));
      return redirectTo(
        reply,
        `${base(shop.shopId)}/events/${encodeURIComponent(sent.event.id)}?test=${sent.attempt.outcome}`,
      );
    });

    app.post(
      '/cabinet/shops/:shopId/webhooks/events/:eventId/resend',
      access('webhooks.manage'),
      async (request, reply) => {
        const shop = shopOf(request);
        const { eventId } = request.params as { eventId: string };
        await resendEvent(deps, shop.shopId, eventId, changerOf(request));
        return redirectTo(reply, `${base(shop.shopId)}/events/${encodeURIComponent(eventId)}?resent=1`);
      },
    );

    app.post('/cabinet/shops/:shopId/webhooks/resend-failed', access('webhooks.manage'), async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const since = parseSince(field(request, 'since'), lang);
      const result = await resendFailedSince(deps, shop.shopId, since, changerOf(request));
      return redirectTo(reply, `${base(shop.shopId)}?resent_failed=${result.requeued}${result.more ? '&more=1' : ''}`);
    });

    app.get('/cabinet/shops/:shopId/webhooks/secret', access('webhooks.secret', true), async (request, reply) => {
      const { lang, session } = cabinetOf(request);
      const shop = shopOf(request);
      return sendPage(request, reply, http, {
        title: `${text(lang, 'secret')} · ${shop.name}`,
        children: html`
          <p><a href=${base(shop.shopId)}>${text(lang, 'back_to_webhooks')}</a></p>
          <h1>${text(lang, 'secret')} · ${shop.name}</h1>
          ${SecretActions({ lang, shopId: shop.shopId, csrf: session!.csrf_token })}
        `,
      });
    });

    // Reveal and rotate answer with the page itself (no redirect): the secret is never in a URL.
    app.post(
      '/cabinet/shops/:shopId/webhooks/secret/reveal',
      access('webhooks.secret', true),
      async (request, reply) => {
        const { lang, session } = cabinetOf(request);
        const shop = shopOf(request);
        const secret = await revealSecret(deps, shop.shopId, changerOf(request));
        return sendPage(request, reply, http, {
          title: `${text(lang, 'secret')} · ${shop.name}`,
          children: html`
            <p><a href=${base(shop.shopId)}>${text(lang, 'back_to_webhooks')}</a></p>
            <h1>${text(lang, 'secret')} · ${shop.name}</h1>
            ${SecretShown({ lang, label: text(lang, 'current_secret'), secret })}
            ${SecretActions({ lang, shopId: shop.shopId, csrf: session!.csrf_token })}
          `,
        });
      },
    );

    app.post(
      '/cabinet/shops/:shopId/webhooks/secret/rotate',
      access('webhooks.secret', true),
      async (request, reply) => {
        const { lang } = cabinetOf(request);
        const shop = shopOf(request);
        const rotated = await rotateSecret(deps, shop.shopId, changerOf(request));
        return sendPage(request, reply, http, {
          title: `${text(lang, 'secret')} · ${shop.name}`,
          notice: { kind: 'ok', text: text(lang, 'new_secret_once') },
          children: html`
            <p><a href=${base(shop.shopId)}>${text(lang, 'back_to_webhooks')}</a></p>
            <h1>${text(lang, 'secret')} · ${shop.name}</h1>
            ${SecretShown({ lang, label: text(lang, 'new_secret'), secret: rotated.webhook_secret })}
            <p class="muted">${text(lang, 'previous_until')} ${when(rotated.previous_secret_expires_at)}</p>
          `,
        });
      },
    );
  };
}

/** Every attempt of an event, newest first (an event has at most a few dozen). */
async function allAttempts(deps: CabinetDeps, shopId: string, eventId: string): Promise<WebhookAttemptView[]> {
  const attempts: WebhookAttemptView[] = [];
  let cursor: string | undefined;
  do {
    const page = await listAttempts(deps, shopId, eventId, { limit: ATTEMPTS_PAGE_SIZE, cursor });
    attempts.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return attempts;
}

function listNotice(lang: Lang, query: Record<string, string | undefined>) {
  if (query.endpoint === 'saved') return { kind: 'ok' as const, text: text(lang, 'saved') };
  if (query.endpoint === 'cleared') return { kind: 'ok' as const, text: text(lang, 'cleared') };
  if (query.resent_failed !== undefined) {
    const count = `${text(lang, 'resent_failed')} ${Number(query.resent_failed) || 0}.`;
    return { kind: 'ok' as const, text: query.more === '1' ? `${count} ${text(lang, 'resent_failed_more')}` : count };
  }
  return undefined;
}

function statusLabel(lang: Lang, status: Status): string {
  return text(lang, `status_${status}`);
}

function EndpointCard(props: {
  lang: Lang;
  shopId: string;
  url: string | null;
  previousUntil: Date | null;
  manage: boolean;
  secret: boolean;
  csrf: string;
}): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'endpoint')}</h2>
    <dl class="facts">
      <dt>${text(lang, 'endpoint')}</dt>
      <dd>${props.url === null ? text(lang, 'endpoint_none') : html`<code id="webhook-url">${props.url}</code>`}</dd>
      <dt>${text(lang, 'secret')}</dt>
      <dd>
        ${text(lang, 'secret_set')}
        ${
          props.previousUntil
            ? html`<span class="muted"> · ${text(lang, 'previous_until')} ${when(props.previousUntil)}</span>`
            : null
        }
        ${props.secret ? html` · <a href=${`${base(props.shopId)}/secret`}>${text(lang, 'secret_manage')}</a>` : null}
      </dd>
    </dl>
    ${
      props.manage
        ? html`<form method="post" action=${`${base(props.shopId)}/endpoint`}>
              ${CsrfField({ token: props.csrf })}
              <label for="endpoint-url">${text(lang, 'endpoint_url')}</label>
              <input
                type="url"
                id="endpoint-url"
                name="url"
                value=${props.url ?? ''}
                maxlength="2048"
                aria-describedby="endpoint-hint"
              />
              <p class="muted" id="endpoint-hint">${text(lang, 'endpoint_hint')}</p>
              <button type="submit">${text(lang, 'save')}</button>
            </form>
            ${
              props.url === null
                ? null
                : html`<form method="post" action=${`${base(props.shopId)}/test`}>
                    ${CsrfField({ token: props.csrf })}
                    <button type="submit" class="secondary">${text(lang, 'send_test')}</button>
                  </form>`
            }`
        : null
    }
  </section>`;
}

function ResendFailedCard(props: { lang: Lang; shopId: string; csrf: string }): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'resend_failed')}</h2>
    <form method="post" action=${`${base(props.shopId)}/resend-failed`}>
      ${CsrfField({ token: props.csrf })}
      <label for="resend-since">${text(lang, 'resend_failed_since')}</label>
      <input type="datetime-local" id="resend-since" name="since" required aria-describedby="resend-hint" />
      <p class="muted" id="resend-hint">${text(lang, 'resend_failed_hint')}</p>
      <button type="submit" class="secondary">${text(lang, 'resend_failed')}</button>
    </form>
  </section>`;
}

function DeliveryLog(props: {
  lang: Lang;
  shopId: string;
  status: Status | undefined;
  events: WebhookEventView[];
  next: string | null;
  first: boolean;
}): View {
  const { lang } = props;
  const statusQuery = props.status ? `status=${props.status}&` : '';
  return html`<section class="card">
    <h2>${text(lang, 'log')}</h2>
    <p><a href=${`${base(props.shopId)}/events`}>${text(lang, 'all_events')}</a></p>
    <form method="get" action=${base(props.shopId)} class="actions">
      <label for="log-status">${text(lang, 'filter')}</label>
      <select id="log-status" name="status">
        <option value="" selected=${props.status === undefined}>${text(lang, 'all')}</option>
        ${STATUSES.map(
          (status) =>
            html`<option value=${status} selected=${props.status === status}>${statusLabel(lang, status)}</option>`,
        )}
      </select>
      <button type="submit" class="secondary">${text(lang, 'show')}</button>
    </form>
    ${
      props.events.length === 0
        ? html`<p>${text(lang, 'no_events')}</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">${text(lang, 'type')}</th>
                  <th scope="col">${text(lang, 'created')}</th>
                  <th scope="col">${text(lang, 'status')}</th>
                  <th scope="col">${text(lang, 'attempts')}</th>
                </tr>
              </thead>
              <tbody>
                ${props.events.map(
                  (event) =>
                    html`<tr data-event=${event.id}>
                      <td>
                        <a href=${`${base(props.shopId)}/events/${encodeURIComponent(event.id)}`}>${event.type}</a>
                      </td>
                      <td>${when(event.created_at)}</td>
                      <td><span class="badge">${statusLabel(lang, event.status)}</span></td>
                      <td>${event.attempt_count}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <nav class="actions" aria-label=${text(lang, 'log')}>
      ${props.first ? null : html`<a href=${`${base(props.shopId)}?${statusQuery}`}>${text(lang, 'first_page')}</a>`}
      ${
        props.next
          ? html`<a href=${`${base(props.shopId)}?${statusQuery}cursor=${encodeURIComponent(props.next)}`} rel="next"
              >${text(lang, 'next_page')}</a
            >`
          : null
      }
    </nav>
  </section>`;
}

/** The cabinet page (under the shop) of an object an event is about, by the form of its id. */
const SUBJECT_PAGES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'payments'],
  [/^inv_[0-9a-z]{26}$/, 'invoices'],
  [/^dep_[0-9a-z]{26}$/, 'deposits'],
  [/^wal_[0-9a-z]{26}$/, 'wallets'],
  [/^po_[0-9a-z]{26}$/, 'payouts'],
  [/^pob_[0-9a-z]{26}$/, 'payouts/batches'],
  [/^ref_[0-9a-z]{26}$/, 'refunds'],
  [/^wd_[0-9a-z]{26}$/, 'withdrawals'],
];

function SubjectLinks(props: { shopId: string; subjects: readonly string[] }): View {
  return html`${props.subjects.map((subject, index) => {
    const page = SUBJECT_PAGES.find(([pattern]) => pattern.test(subject))?.[1];
    const label = html`<code>${subject}</code>`;
    return html`${index > 0 ? ', ' : ''}${
      page
        ? html`<a href=${`/cabinet/shops/${encodeURIComponent(props.shopId)}/${page}/${encodeURIComponent(subject)}`}
            >${label}</a
          >`
        : label
    }`;
  })}`;
}

function EventCard(props: {
  lang: Lang;
  shopId: string;
  event: WebhookEventView;
  subjects: readonly string[];
  manage: boolean;
  csrf: string;
}): View {
  const { lang, event } = props;
  return html`<section class="card">
    <dl class="facts">
      <dt>${text(lang, 'type')}</dt>
      <dd>${event.type}</dd>
      <dt>${text(lang, 'created')}</dt>
      <dd>${when(event.created_at)}</dd>
      ${
        props.subjects.length > 0
          ? html`<dt>${text(lang, 'about')}</dt>
              <dd id="event-subjects">${SubjectLinks({ shopId: props.shopId, subjects: props.subjects })}</dd>`
          : null
      }
      <dt>${text(lang, 'destination')}</dt>
      <dd>${event.destination_url === null ? '—' : html`<code>${event.destination_url}</code>`}</dd>
      <dt>${text(lang, 'status')}</dt>
      <dd><span class="badge" data-status=${event.status}>${statusLabel(lang, event.status)}</span></dd>
      <dt>${text(lang, 'attempts')}</dt>
      <dd>${event.attempt_count}</dd>
      ${
        event.next_attempt_at
          ? html`<dt>${text(lang, 'next_attempt')}</dt>
              <dd>${when(event.next_attempt_at)}</dd>`
          : null
      }
    </dl>
    ${
      props.manage && event.destination_url !== null
        ? html`<form method="post" action=${`${base(props.shopId)}/events/${encodeURIComponent(event.id)}/resend`}>
            ${CsrfField({ token: props.csrf })}
            <button type="submit">${text(lang, 'resend')}</button>
          </form>`
        : null
    }
  </section>`;
}

function AttemptTable(props: { lang: Lang; attempts: WebhookAttemptView[] }): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'attempts')}</h2>
    ${
      props.attempts.length === 0
        ? html`<p>${text(lang, 'no_attempts')}</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">${text(lang, 'time')}</th>
                  <th scope="col">${text(lang, 'http_status')}</th>
                  <th scope="col">${text(lang, 'duration')}</th>
                  <th scope="col">${text(lang, 'outcome')}</th>
                  <th scope="col">${text(lang, 'response')}</th>
                </tr>
              </thead>
              <tbody>
                ${props.attempts.map(
                  (attempt) =>
                    html`<tr data-attempt=${attempt.attempt_number}>
                      <td>${attempt.attempt_number}</td>
                      <td>${when(attempt.attempted_at)}</td>
                      <td>${attempt.status_code ?? '—'}</td>
                      <td>${attempt.duration_ms}</td>
                      <td>
                        ${attempt.outcome}${attempt.error ? html`<br /><span class="muted">${attempt.error}</span>` : null}
                      </td>
                      <td>
                        <code class="excerpt">${(attempt.response_body ?? '').slice(0, RESPONSE_EXCERPT_CHARS)}</code>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

function SecretActions(props: { lang: Lang; shopId: string; csrf: string }): View {
  const { lang } = props;
  return html`<section class="card">
      <h2>${text(lang, 'reveal')}</h2>
      <p class="muted">${text(lang, 'reveal_intro')}</p>
      <form method="post" action=${`${base(props.shopId)}/secret/reveal`}>
        ${CsrfField({ token: props.csrf })}
        <button type="submit" class="secondary">${text(lang, 'reveal')}</button>
      </form>
    </section>
    <section class="card">
      <h2>${text(lang, 'rotate')}</h2>
      <p class="muted">${text(lang, 'rotate_intro')}</p>
      <form method="post" action=${`${base(props.shopId)}/secret/rotate`}>
        ${CsrfField({ token: props.csrf })}
        <button type="submit" class="danger">${text(lang, 'rotate')}</button>
      </form>
    </section>`;
}

function SecretShown(props: { lang: Lang; label: string; secret: string }): View {
  return html`<section class="card">
    <h2>${props.label}</h2>
    <code class="secret" id="webhook-secret">${props.secret}</code>
    ${CopyButton({ lang: props.lang, target: 'webhook-secret' })}
  </section>`;
}
