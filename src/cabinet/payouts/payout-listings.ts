// The shop's payouts and batch payouts as cabinet tables (listing.ts) and their
// own pages: a payout's facts and timeline (created and reserved, broadcast,
// completed or failed, its reservation's ledger transfers, its webhook events,
// its transaction), a batch's facts, items and timeline. Reads only, through the
// payouts module's services.
import type { FastifyInstance } from 'fastify';
import { browseBatches, getBatch } from '../../crypto/payouts/batch-service.ts';
import { browsePayouts, payoutHistory, type PayoutHistory } from '../../crypto/payouts/payout-service.ts';
import {
  BATCH_STATUSES,
  PAYOUT_STATUSES,
  type BatchSummaryView,
  type BatchView,
  type PayoutView,
} from '../../crypto/payouts/payouts-views.ts';
import { usdtText } from '../../crypto/receiving/receiving-views.ts';
import { transfersAbout, type ObjectTransfer } from '../../ledger/ledger-history.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { eventsAbout, type WebhookEventView } from '../../webhooks/webhook-service.ts';
import { cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetModuleDeps } from '../cabinet-context.ts';
import type { Listing } from '../listings/listing.ts';
import { installListing } from '../listings/listing-routes.ts';
import { roleCan } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import { Timeline, TransactionLink, type TimelineEntry } from '../views/timeline.ts';
import PAYOUT_TEXTS from './payout-texts.json' with { type: 'json' };

export const payoutText = translator(PAYOUT_TEXTS);
const text = payoutText;

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'payments.read' as const } } } };

/** `2026-11-01 10:00 UTC`. */
function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

function StatusBadge(status: string): View {
  return html`<span class=${`badge ${status}`}>${status}</span>`;
}

function payoutListing(deps: Pick<CabinetModuleDeps, 'db'>): Listing<PayoutView> {
  return {
    path: 'payouts',
    title: (lang) => text(lang, 'payouts'),
    permission: 'payments.read',
    statuses: PAYOUT_STATUSES,
    amountAsset: 'USDT',
    searchHint: (lang) => text(lang, 'payout_search_hint'),
    columns: [
      {
        key: 'payout_id',
        label: (l) => text(l, 'col_payout_id'),
        text: (r) => r.payout_id,
        cell: (r) => html`<code>${r.payout_id}</code>`,
      },
      { key: 'external_id', label: (l) => text(l, 'col_external_id'), text: (r) => r.external_id },
      { key: 'status', label: (l) => text(l, 'col_status'), text: (r) => r.status, cell: (r) => StatusBadge(r.status) },
      { key: 'amount', label: (l) => text(l, 'col_amount'), text: (r) => r.recipient_amount },
      { key: 'network_fee', label: (l) => text(l, 'col_network_fee'), text: (r) => r.network_fee, onPage: false },
      { key: 'service_fee', label: (l) => text(l, 'col_service_fee'), text: (r) => r.service_fee, onPage: false },
      { key: 'total_debit', label: (l) => text(l, 'col_total_debit'), text: (r) => r.total_debit },
      {
        key: 'address',
        label: (l) => text(l, 'col_address'),
        text: (r) => r.recipient_address,
        cell: (r) => html`<code>${r.recipient_address}</code>`,
      },
      { key: 'tx_hash', label: (l) => text(l, 'col_tx_hash'), text: (r) => r.tx_hash ?? '', onPage: false },
      { key: 'batch_id', label: (l) => text(l, 'col_batch'), text: (r) => r.batch_id ?? '', onPage: false },
      {
        key: 'created_at',
        label: (l) => text(l, 'col_created'),
        text: (r) => r.created_at,
        cell: (r) => when(r.created_at),
      },
      { key: 'error', label: (l) => text(l, 'col_error'), text: (r) => r.error?.code ?? '' },
    ],
    read: (shop, filter, page) => browsePayouts(deps, shop.shopId, filter, page),
    detailPath: (row) => `payouts/${row.payout_id}`,
  };
}

function batchListing(deps: Pick<CabinetModuleDeps, 'db'>): Listing<BatchSummaryView> {
  return {
    path: 'payouts/batches',
    title: (lang) => text(lang, 'batches'),
    permission: 'payments.read',
    statuses: BATCH_STATUSES,
    amountAsset: 'USDT',
    searchHint: (lang) => text(lang, 'batch_search_hint'),
    columns: [
      {
        key: 'batch_id',
        label: (l) => text(l, 'col_batch_id'),
        text: (r) => r.batch_id,
        cell: (r) => html`<code>${r.batch_id}</code>`,
      },
      { key: 'external_id', label: (l) => text(l, 'col_external_id'), text: (r) => r.external_id },
      { key: 'status', label: (l) => text(l, 'col_status'), text: (r) => r.status, cell: (r) => StatusBadge(r.status) },
      { key: 'item_count', label: (l) => text(l, 'col_items'), text: (r) => String(r.item_count) },
      ...PAYOUT_STATUSES.map((status) => ({
        key: status,
        label: (l: Lang) => text(l, `col_${status}`),
        text: (r: BatchSummaryView) => String(r.counts[status]),
      })),
      { key: 'total_debit', label: (l) => text(l, 'col_total_debit'), text: (r) => r.total_debit },
      {
        key: 'created_at',
        label: (l) => text(l, 'col_created'),
        text: (r) => r.created_at,
        cell: (r) => when(r.created_at),
      },
    ],
    read: (shop, filter, page) => browseBatches(deps, shop.shopId, filter, page),
    detailPath: (row) => `payouts/batches/${row.batch_id}`,
  };
}

export function installPayoutListings(app: FastifyInstance, deps: CabinetModuleDeps, http: CabinetHttpDeps): void {
  installListing(app, deps, http, payoutListing(deps));
  installListing(app, deps, http, batchListing(deps));

  app.get('/cabinet/shops/:shopId/payouts/:payoutId', READ, async (request, reply) => {
    const { lang, role } = cabinetOf(request);
    const shop = shopOf(request);
    const { payoutId } = request.params as { payoutId: string };
    const done = (request.query as { done?: unknown }).done;
    const history = await payoutHistory(deps, shop.shopId, payoutId);
    const [transfers, events] = await Promise.all([
      transfersAbout(deps.db, 'payout', payoutId),
      eventsAbout(deps, shop.shopId, payoutId),
    ]);
    return sendPage(request, reply, http, {
      title: `${text(lang, 'payout')} ${payoutId} · ${shop.name}`,
      notice:
        done === 'created' || done === 'repeated'
          ? { kind: 'ok', text: `${text(lang, done === 'created' ? 'created_notice' : 'repeated_notice')} ${payoutId}` }
          : undefined,
      children: PayoutPage({
        lang,
        shop,
        history,
        transfers,
        events,
        config: deps.config,
        canCreate: role !== undefined && roleCan(role, 'payouts.create'),
      }),
    });
  });

  app.get('/cabinet/shops/:shopId/payouts/batches/:batchId', READ, async (request, reply) => {
    const { lang } = cabinetOf(request);
    const shop = shopOf(request);
    const { batchId } = request.params as { batchId: string };
    const done = (request.query as { done?: unknown }).done;
    const batch = await getBatch(deps, shop.shopId, batchId);
    // The ledger knows a batch's money by its items (each its own reservation): their pages show it.
    const events = await eventsAbout(deps, shop.shopId, batchId);
    return sendPage(request, reply, http, {
      title: `${text(lang, 'batch')} ${batchId} · ${shop.name}`,
      notice:
        done === 'created' || done === 'repeated'
          ? {
              kind: 'ok',
              text: `${text(lang, done === 'created' ? 'batch_created_notice' : 'batch_repeated_notice')} ${batchId}`,
            }
          : undefined,
      children: BatchPage({ lang, shop, batch, events }),
    });
  });
}

function LedgerEntries(lang: Lang, transfers: readonly ObjectTransfer[]): TimelineEntry[] {
  return transfers.map((transfer) => ({
    at: transfer.createdAt,
    what: html`${text(lang, 'tl_ledger')} ${transfer.type} ${usdtText(transfer.amount)} ${transfer.currency}
    (${transfer.status})`,
    detail: html`<code>${transfer.transferId}</code>`,
  }));
}

function WebhookEntries(lang: Lang, shopId: string, events: readonly WebhookEventView[]): TimelineEntry[] {
  return events.map((event) => ({
    at: new Date(event.created_at),
    what: html`${text(lang, 'tl_webhook')}
      <a href=${`/cabinet/shops/${shopId}/webhooks/events/${event.id}`}>${event.type}</a> · ${event.status}`,
  }));
}

function PayoutPage(props: {
  lang: Lang;
  shop: ShopProfile;
  history: PayoutHistory;
  transfers: readonly ObjectTransfer[];
  events: readonly WebhookEventView[];
  config: CabinetModuleDeps['config'];
  canCreate: boolean;
}): View {
  const { lang, shop, history } = props;
  const payout = history.payout;
  const tx = payout.tx_hash
    ? TransactionLink({ lang, config: props.config, mode: shop.mode, txHash: payout.tx_hash })
    : null;
  const entries: TimelineEntry[] = [
    {
      at: new Date(payout.created_at),
      what: html`${text(lang, 'tl_created')} ${payout.total_debit} USDT`,
    },
    ...(history.submittedAt ? [{ at: history.submittedAt, what: text(lang, 'tl_broadcast'), detail: tx }] : []),
    ...(payout.completed_at && (payout.status === 'completed' || payout.status === 'failed')
      ? [
          {
            at: new Date(payout.completed_at),
            what: text(lang, payout.status === 'completed' ? 'tl_completed' : 'tl_failed'),
            detail: payout.error ? html`<code>${payout.error.code}</code> ${payout.error.message}` : null,
          },
        ]
      : []),
    ...LedgerEntries(lang, props.transfers),
    ...WebhookEntries(lang, shop.shopId, props.events),
  ];
  const base = `/cabinet/shops/${shop.shopId}`;
  return html`
    <p><a href=${`${base}/payouts`}>${text(lang, 'all_payouts')}</a></p>
    <h1>${text(lang, 'payout')} <code>${payout.payout_id}</code></h1>
    <section class="card">
      <h2>${text(lang, 'facts')}</h2>
      <dl class="facts">
        <dt>${text(lang, 'col_status')}</dt>
        <dd>${StatusBadge(payout.status)}</dd>
        <dt>${text(lang, 'col_external_id')}</dt>
        <dd>${payout.external_id}</dd>
        <dt>${text(lang, 'col_amount')}</dt>
        <dd>${payout.recipient_amount}</dd>
        <dt>${text(lang, 'col_network_fee')}</dt>
        <dd>${payout.network_fee}</dd>
        <dt>${text(lang, 'col_service_fee')}</dt>
        <dd>${payout.service_fee}</dd>
        <dt>${text(lang, 'col_total_debit')}</dt>
        <dd>${payout.total_debit}</dd>
        ${
          payout.network_fee_actual === null
            ? null
            : html`<dt>${text(lang, 'col_network_fee_actual')}</dt>
                <dd>${payout.network_fee_actual}</dd>`
        }
        <dt>${text(lang, 'col_address')}</dt>
        <dd><code>${payout.recipient_address}</code></dd>
        <dt>${text(lang, 'col_tx_hash')}</dt>
        <dd>${tx ?? '—'}</dd>
        <dt>${text(lang, 'col_batch')}</dt>
        <dd>
          ${payout.batch_id ? html`<a href=${`${base}/payouts/batches/${payout.batch_id}`}><code>${payout.batch_id}</code></a>` : '—'}
        </dd>
        <dt>${text(lang, 'col_created')}</dt>
        <dd>${when(payout.created_at)}</dd>
        <dt>${text(lang, 'col_completed_at')}</dt>
        <dd>${payout.completed_at ? when(payout.completed_at) : '—'}</dd>
        <dt>${text(lang, 'col_error')}</dt>
        <dd>${payout.error ? html`<code>${payout.error.code}</code> ${payout.error.message}` : '—'}</dd>
      </dl>
    </section>
    ${Timeline({ lang, entries })}
    ${props.canCreate ? html`<p><a class="button" href=${`${base}/payouts/new`}>${text(lang, 'new_payout')}</a></p>` : null}
  `;
}

function BatchPage(props: {
  lang: Lang;
  shop: ShopProfile;
  batch: BatchView;
  events: readonly WebhookEventView[];
}): View {
  const { lang, shop, batch } = props;
  const base = `/cabinet/shops/${shop.shopId}`;
  const finished = batch.completed_at
    ? [
        {
          at: new Date(batch.completed_at),
          what: html`${text(lang, 'tl_batch_finished')} ${StatusBadge(batch.status)}`,
        },
      ]
    : [];
  const entries: TimelineEntry[] = [
    { at: new Date(batch.created_at), what: html`${text(lang, 'tl_batch_created')} ${batch.item_count}` },
    ...finished,
    ...WebhookEntries(lang, shop.shopId, props.events),
  ];
  return html`
    <p><a href=${`${base}/payouts/batches`}>${text(lang, 'all_batches')}</a></p>
    <h1>${text(lang, 'batch')} <code>${batch.batch_id}</code></h1>
    <section class="card">
      <h2>${text(lang, 'facts')}</h2>
      <dl class="facts">
        <dt>${text(lang, 'col_status')}</dt>
        <dd>${StatusBadge(batch.status)}</dd>
        <dt>${text(lang, 'col_external_id')}</dt>
        <dd>${batch.external_id}</dd>
        <dt>${text(lang, 'col_items')}</dt>
        <dd>${batch.item_count}</dd>
        ${PAYOUT_STATUSES.map(
          (status) =>
            html`<dt>${text(lang, `col_${status}`)}</dt>
              <dd>${batch.counts[status]}</dd>`,
        )}
        <dt>${text(lang, 'col_total_debit')}</dt>
        <dd>${batch.total_debit}</dd>
        <dt>${text(lang, 'col_created')}</dt>
        <dd>${when(batch.created_at)}</dd>
        <dt>${text(lang, 'col_completed_at')}</dt>
        <dd>${batch.completed_at ? when(batch.completed_at) : '—'}</dd>
      </dl>
    </section>
    <section class="card">
      <h2>${text(lang, 'items')}</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">${text(lang, 'col_payout_id')}</th>
              <th scope="col">${text(lang, 'col_external_id')}</th>
              <th scope="col">${text(lang, 'col_status')}</th>
              <th scope="col">${text(lang, 'col_amount')}</th>
              <th scope="col">${text(lang, 'col_address')}</th>
            </tr>
          </thead>
          <tbody>
            ${batch.payouts.map(
              (payout, index) =>
                html`<tr>
                  <td>${index + 1}</td>
                  <td>
                    <a href=${`${base}/payouts/${payout.payout_id}`}><code>${payout.payout_id}</code></a>
                  </td>
                  <td>${payout.external_id}</td>
                  <td>${StatusBadge(payout.status)}</td>
                  <td>${payout.recipient_amount}</td>
                  <td><code>${payout.recipient_address}</code></td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>
    ${Timeline({ lang, entries })}
  `;
}
