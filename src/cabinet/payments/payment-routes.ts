// /cabinet/shops/:shopId/payments: the shop's RUB payments as a table
// (payment-listing.ts, with its CSV download), and one payment's page — its
// facts and its timeline: created, each attempt at the acquirer (method,
// outcome, decline code), paid / failed / expired, the merchant's refunds, its ledger transfers and the
// webhook events about it, each linked to the event's page.
import type { FastifyInstance } from 'fastify';
import { transfersAbout, type ObjectTransfer } from '../../ledger/ledger-history.ts';
import { formatMinor } from '../../money/decimal.ts';
import {
  getPaymentRecord,
  type PaymentAttemptFact,
  type PaymentRecord,
  type PaymentRefundFact,
} from '../../payments/payment-records.ts';
import { eventsAbout, type WebhookEventView } from '../../webhooks/webhook-service.ts';
import { cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { installListing } from '../listings/listing-routes.ts';
import { html, type View } from '../views/html.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { Timeline, type TimelineEntry } from '../views/timeline.ts';
import { paymentListing, paymentText as text, utcText } from './payment-listing.ts';

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'payments.read' as const } } } };

export function paymentRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    installListing(app, deps, http, paymentListing(deps));

    app.get('/cabinet/shops/:shopId/payments/:paymentId', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const { paymentId } = request.params as { paymentId: string };
      const { record, attempts, refunds } = await getPaymentRecord(deps, shop.shopId, paymentId);
      const [transfers, events] = await Promise.all([
        transfersAbout(deps.db, 'payment', record.view.payment_id),
        eventsAbout(deps, shop.shopId, record.view.payment_id),
      ]);
      return sendPage(request, reply, http, {
        title: `${text(lang, 'payment')} ${record.view.payment_id}`,
        children: html`
          <p><a href=${`/cabinet/shops/${shop.shopId}/payments`}>${text(lang, 'back')}</a></p>
          <h1>${text(lang, 'payment')} <code>${record.view.payment_id}</code></h1>
          ${PaymentFacts({ lang, record })}
          ${Timeline({ lang, entries: paymentTimeline(lang, shop.shopId, record, { attempts, refunds }, transfers, events) })}
        `,
      });
    });
  };
}

function rub(minor: bigint): string {
  return `${formatMinor(minor, 'RUB')} RUB`;
}

function PaymentFacts(props: { lang: Lang; record: PaymentRecord }): View {
  const { lang, record } = props;
  const { view } = record;
  return html`<section class="card" aria-label=${text(lang, 'facts')}>
    <dl class="facts">
      <dt>${text(lang, 'status')}</dt>
      <dd><span class="badge" data-status=${view.status}>${view.status}</span></dd>
      <dt>${text(lang, 'order_id')}</dt>
      <dd id="payment-order-id">${view.order_id ?? '—'}</dd>
      <dt>${text(lang, 'amount')}</dt>
      <dd>${formatMinor(record.amountKopecks, 'RUB')}</dd>
      <dt>${text(lang, 'amount_total')}</dt>
      <dd>${formatMinor(record.amountTotalKopecks, 'RUB')}</dd>
      <dt>${text(lang, 'method')}</dt>
      <dd>${view.method ?? text(lang, 'any_method')}</dd>
      ${
        record.paidMethod
          ? html`<dt>${text(lang, 'paid_method')}</dt>
              <dd>${record.paidMethod}</dd>`
          : null
      }
      ${
        record.paidTotalKopecks !== null
          ? html`<dt>${text(lang, 'paid_total')}</dt>
              <dd>${formatMinor(record.paidTotalKopecks, 'RUB')}</dd>`
          : null
      }
      ${
        record.failureReason
          ? html`<dt>${text(lang, 'failure_reason')}</dt>
              <dd>${record.failureReason}</dd>`
          : null
      }
      <dt>${text(lang, 'order_code')}</dt>
      <dd><code>${view.order_code}</code></dd>
      <dt>${text(lang, 'created')}</dt>
      <dd>${utcText(record.createdAt)}</dd>
      <dt>${text(lang, 'expires')}</dt>
      <dd>${utcText(new Date(view.expires_at))}</dd>
      <dt>${text(lang, 'payment_url')}</dt>
      <dd><code>${view.payment_url}</code></dd>
    </dl>
  </section>`;
}

function attemptEntries(lang: Lang, attempt: PaymentAttemptFact): TimelineEntry[] {
  const outcome = text(lang, `attempt_${attempt.status}`);
  const entries: TimelineEntry[] = [
    {
      at: attempt.createdAt,
      what: html`${`${text(lang, 'event_attempt')}: ${attempt.method} · ${rub(attempt.amountKopecks)} — `}<span
          data-attempt-status=${attempt.status}
          >${outcome}</span
        >`,
      detail: html`${attempt.connector}${
        attempt.declineCode ? html` · ${text(lang, 'decline_code')} <code>${attempt.declineCode}</code>` : null
      }${attempt.appliedAs === 'suspense' ? html` · ${text(lang, 'suspense')}` : null}`,
    },
  ];
  if (attempt.refundedAt) entries.push({ at: attempt.refundedAt, what: text(lang, 'event_attempt_refunded') });
  return entries;
}

function refundEntry(lang: Lang, refund: PaymentRefundFact): TimelineEntry {
  return {
    at: refund.createdAt,
    what: html`${`${text(lang, 'event_refund')}: ${rub(refund.amountKopecks)} — `}<span
        data-refund-status=${refund.status}
        >${text(lang, `refund_${refund.status}`)}</span
      >`,
    detail: html`<code>${refund.refundId}</code
      >${refund.failureReason ? html` · <code>${refund.failureReason}</code>` : null}`,
  };
}

/** A ledger transfer on an object's timeline. */
function transferEntry(lang: Lang, transfer: ObjectTransfer): TimelineEntry {
  return {
    at: transfer.createdAt,
    what: `${text(lang, 'ledger')}: ${transfer.type} · ${formatMinor(transfer.amount, transfer.currency)} ${transfer.currency} · ${transfer.status}`,
    detail: html`<code>${transfer.debitAccountId}</code> → <code>${transfer.creditAccountId}</code>`,
  };
}

/** A webhook event on an object's timeline, linked to the event's page. */
function eventEntry(lang: Lang, shopId: string, event: WebhookEventView): TimelineEntry {
  return {
    at: new Date(event.created_at),
    what: html`${`${text(lang, 'webhook')}: `}<a
        href=${`/cabinet/shops/${shopId}/webhooks/events/${encodeURIComponent(event.id)}`}
        >${event.type}</a
      >${` · ${event.status}`}`,
  };
}

function paymentTimeline(
  lang: Lang,
  shopId: string,
  record: PaymentRecord,
  facts: { readonly attempts: readonly PaymentAttemptFact[]; readonly refunds: readonly PaymentRefundFact[] },
  transfers: readonly ObjectTransfer[],
  events: readonly WebhookEventView[],
): TimelineEntry[] {
  const { view } = record;
  const entries: TimelineEntry[] = [
    {
      at: record.createdAt,
      what: text(lang, 'event_created'),
      detail: `${rub(record.amountKopecks)} · ${view.method ?? text(lang, 'any_method')}`,
    },
    ...facts.attempts.flatMap((attempt) => attemptEntries(lang, attempt)),
    ...facts.refunds.map((refund) => refundEntry(lang, refund)),
  ];
  if (record.paidAt)
    entries.push({
      at: record.paidAt,
      what: text(lang, 'event_paid'),
      detail: [record.paidMethod, record.paidTotalKopecks === null ? null : rub(record.paidTotalKopecks)]
        .filter((part) => part !== null)
        .join(' · '),
    });
  if (record.failedAt)
    entries.push({ at: record.failedAt, what: text(lang, 'event_failed'), detail: record.failureReason ?? undefined });
  if (record.expiredAt) entries.push({ at: record.expiredAt, what: text(lang, 'event_expired') });
  entries.push(...transfers.map((transfer) => transferEntry(lang, transfer)));
  entries.push(...events.map((event) => eventEntry(lang, shopId, event)));
  return entries;
}
