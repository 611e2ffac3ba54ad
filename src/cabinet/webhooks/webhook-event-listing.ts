// The shop's webhook events as a cabinet table: filtered by delivery status
// (pending, delivered, failed, no_destination), days, and an exact event id,
// event type or id of the object an event is about; each row opens the event's
// page (its attempts, resend).
import { listEvents, type EventStatus, type WebhookEventView } from '../../webhooks/webhook-service.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import type { Listing } from '../listings/listing.ts';
import { html } from '../views/html.ts';
import { translator } from '../views/cabinet-language.ts';
import WEBHOOK_TEXTS from './webhook-texts.json' with { type: 'json' };

const text = translator(WEBHOOK_TEXTS);

const EVENT_STATUSES: readonly EventStatus[] = ['pending', 'delivered', 'failed', 'no_destination'];

function utc(iso: string | null): string {
  return iso === null ? '' : iso.slice(0, 19).replace('T', ' ');
}

export function webhookEventListing(deps: CabinetDeps): Listing<WebhookEventView> {
  return {
    path: 'webhooks/events',
    title: (lang) => text(lang, 'events'),
    permission: 'webhooks.read',
    statuses: EVENT_STATUSES,
    searchHint: (lang) => text(lang, 'events_search_hint'),
    columns: [
      {
        key: 'event_id',
        label: (lang) => text(lang, 'event_id'),
        text: (row) => row.id,
        cell: (row) => html`<code>${row.id}</code>`,
        onPage: false,
      },
      { key: 'type', label: (lang) => text(lang, 'type'), text: (row) => row.type },
      { key: 'created_at', label: (lang) => text(lang, 'created_utc'), text: (row) => utc(row.created_at) },
      {
        key: 'status',
        label: (lang) => text(lang, 'status'),
        text: (row) => row.status,
        cell: (row, lang) =>
          html`<span class="badge" data-status=${row.status}>${text(lang, `status_${row.status}`)}</span>`,
      },
      { key: 'attempts', label: (lang) => text(lang, 'attempts'), text: (row) => String(row.attempt_count) },
      {
        key: 'last_attempt_at',
        label: (lang) => text(lang, 'last_attempt'),
        text: (row) => utc(row.last_attempt_at),
        onPage: false,
      },
      {
        key: 'next_attempt_at',
        label: (lang) => text(lang, 'next_attempt_utc'),
        text: (row) => utc(row.next_attempt_at),
        onPage: false,
      },
      {
        key: 'destination_url',
        label: (lang) => text(lang, 'destination'),
        text: (row) => row.destination_url ?? '',
        onPage: false,
      },
    ],
    read: (shop, filter, page) =>
      listEvents(deps, shop.shopId, {
        status: EVENT_STATUSES.find((status) => status === filter.status),
        createdFrom: filter.createdFrom,
        createdBefore: filter.createdBefore,
        search: filter.search,
        limit: page.limit,
        cursor: page.cursor,
      }),
    detailPath: (row) => `webhooks/events/${encodeURIComponent(row.id)}`,
  };
}
