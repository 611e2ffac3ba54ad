// The shop's RUB payments as a cabinet table: the columns of GET /v1/payments
// and what the API keeps to itself (how the payer paid, when it ended), filtered
// by status, days, amount (RUB) and an exact payment id or order_id.
import { formatMinor } from '../../money/decimal.ts';
import { listPaymentRecords, PAYMENT_STATUSES, type PaymentRecord } from '../../payments/payment-records.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import type { Listing } from '../listings/listing.ts';
import { html } from '../views/html.ts';
import { translator } from '../views/cabinet-language.ts';
import PAYMENT_TEXTS from './payment-texts.json' with { type: 'json' };

export const paymentText = translator(PAYMENT_TEXTS);
const text = paymentText;

/** An instant as the tables show it: `2026-11-01 10:00:00`, UTC. */
export function utcText(at: Date | null): string {
  return at === null ? '' : isoUtcText(at.toISOString());
}

/** `utcText` of an instant the API view already wrote as ISO 8601: a download of a million rows converts each once. */
function isoUtcText(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

/** When the payment ended: paid, failed or expired; empty while pending. */
function finishedText(record: PaymentRecord): string {
  return record.view.paid_at === null ? utcText(record.failedAt ?? record.expiredAt) : isoUtcText(record.view.paid_at);
}

export function paymentListing(deps: CabinetDeps): Listing<PaymentRecord> {
  return {
    path: 'payments',
    title: (lang) => text(lang, 'payments'),
    permission: 'payments.read',
    statuses: PAYMENT_STATUSES,
    amountAsset: 'RUB',
    searchHint: (lang) => text(lang, 'search_hint'),
    columns: [
      {
        key: 'payment_id',
        label: (lang) => text(lang, 'payment_id'),
        text: (row) => row.view.payment_id,
        cell: (row) => html`<code>${row.view.payment_id}</code>`,
      },
      { key: 'order_id', label: (lang) => text(lang, 'order_id'), text: (row) => row.view.order_id ?? '' },
      {
        key: 'status',
        label: (lang) => text(lang, 'status'),
        text: (row) => row.view.status,
        cell: (row) => html`<span class="badge" data-status=${row.view.status}>${row.view.status}</span>`,
      },
      { key: 'amount', label: (lang) => text(lang, 'amount'), text: (row) => formatMinor(row.amountKopecks, 'RUB') },
      {
        key: 'amount_total',
        label: (lang) => text(lang, 'amount_total'),
        text: (row) => formatMinor(row.amountTotalKopecks, 'RUB'),
        onPage: false,
      },
      { key: 'method', label: (lang) => text(lang, 'method'), text: (row) => row.view.method ?? '', onPage: false },
      { key: 'paid_method', label: (lang) => text(lang, 'paid_method'), text: (row) => row.paidMethod ?? '' },
      {
        key: 'paid_total',
        label: (lang) => text(lang, 'paid_total'),
        text: (row) => (row.paidTotalKopecks === null ? '' : formatMinor(row.paidTotalKopecks, 'RUB')),
        onPage: false,
      },
      { key: 'created_at', label: (lang) => text(lang, 'created'), text: (row) => isoUtcText(row.view.created_at) },
      { key: 'finished_at', label: (lang) => text(lang, 'finished'), text: finishedText },
      {
        key: 'expires_at',
        label: (lang) => text(lang, 'expires'),
        text: (row) => isoUtcText(row.view.expires_at),
        onPage: false,
      },
      {
        key: 'order_code',
        label: (lang) => text(lang, 'order_code'),
        text: (row) => row.view.order_code,
        onPage: false,
      },
    ],
    read: (shop, filter, page) => listPaymentRecords(deps, shop.shopId, filter, page),
    detailPath: (row) => `payments/${row.view.payment_id}`,
  };
}
