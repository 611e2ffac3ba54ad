// The detail pages of crypto receiving: an invoice (expected against received,
// its deposits and refunds), a deposit, a static wallet (block / unblock) and a
// refund, each with its timeline of state changes, ledger transfers, webhook
// events and on-chain transactions; and the refund form with its fee preview.
import type { NetworkMode } from '../../crypto/tron/tron-networks.ts';
import type { Config } from '../../config.ts';
import type { DepositRecord } from '../../crypto/receiving/receiving-browsing.ts';
import {
  usdtText,
  type DepositView,
  type InvoiceView,
  type WalletView,
} from '../../crypto/receiving/receiving-views.ts';
import type { RefundQuote } from '../../crypto/refunds/refund-service.ts';
import type { RefundView } from '../../crypto/refunds/refunds-views.ts';
import { transfersAbout } from '../../ledger/ledger-history.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { parseMinor, formatMinor } from '../../money/decimal.ts';
import { eventsAbout } from '../../webhooks/webhook-service.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { html, type Children, type View } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { Timeline, TransactionLink, type TimelineEntry } from '../views/timeline.ts';
import { minuteOf, receivingText as text } from './receiving-listings.ts';

type Mode = ShopProfile['mode'];

interface PageBase {
  readonly lang: Lang;
  readonly config: Config;
  readonly shop: ShopProfile;
}

/** What a refund form sends back: a deposit, or an invoice's credited deposits. */
export interface RefundSubject {
  readonly kind: 'deposit' | 'invoice';
  readonly id: string;
}

function base(shop: ShopProfile): string {
  return `/cabinet/shops/${shop.shopId}`;
}

function micro(decimal: string): bigint {
  const parsed = parseMinor(decimal, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new Error(`not a USDT amount: ${decimal}`);
  return parsed.minor;
}

function Link(props: { shop: ShopProfile; path: string; id: string | null }): Children {
  if (props.id === null) return text('en', 'none');
  return html`<a href=${`${base(props.shop)}/${props.path}/${props.id}`}><code>${props.id}</code></a>`;
}

function Badge(props: { status: string }): View {
  return html`<span class=${`badge ${props.status}`}>${props.status}</span>`;
}

function Facts(props: { lang: Lang; rows: ReadonlyArray<readonly [string, Children]> }): View {
  return html`<section class="card">
    <h2>${text(props.lang, 'facts')}</h2>
    <dl class="facts">
      ${props.rows.map(
        ([label, value]) =>
          html`<dt>${label}</dt>
            <dd>${value}</dd>`,
      )}
    </dl>
  </section>`;
}

function Heading(props: {
  lang: Lang;
  shop: ShopProfile;
  what: string;
  id: string;
  back: string;
  backLabel: string;
  networkMode?: NetworkMode;
}) {
  return html`<p>
      <a href=${base(props.shop)}>${props.shop.name}</a> ·
      <a href=${`${base(props.shop)}/${props.back}`}>${props.backLabel}</a>
    </p>
    <h1>${props.what} <code>${props.id}</code> ${TestnetMarker(props)}</h1>`;
}

/** A live shop's object made on a testnet (PAYGATE_TRON_NETWORK=nile): its USDT has no value. Sandbox shops say so everywhere already. */
function TestnetMarker(props: { lang: Lang; shop: ShopProfile; networkMode?: NetworkMode }): View | null {
  if (props.shop.mode !== 'live' || props.networkMode !== 'testnet') return null;
  return html`<span class="badge" data-testid="testnet-marker">${text(props.lang, 'testnet_nile')}</span>`;
}

/** The webhook events about these objects and the ledger transfers of these references, as timeline entries. */
export async function historyOf(
  deps: CabinetDeps,
  shop: ShopProfile,
  lang: Lang,
  about: {
    readonly subjectIds: readonly string[];
    readonly ledger: ReadonlyArray<readonly [referenceType: string, referenceId: string]>;
  },
): Promise<TimelineEntry[]> {
  const entries: TimelineEntry[] = [];
  const seen = new Set<string>();
  for (const subjectId of about.subjectIds) {
    for (const event of await eventsAbout(deps, shop.shopId, subjectId)) {
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      entries.push({
        at: new Date(event.created_at),
        what: html`${`${text(lang, 't_webhook')}: `}<a href=${`${base(shop)}/webhooks/events/${event.id}`}
            ><code>${event.type}</code></a
          >`,
        detail: `${event.status} · ${event.attempt_count}`,
      });
    }
  }
  for (const [referenceType, referenceId] of about.ledger) {
    for (const transfer of await transfersAbout(deps.db, referenceType, referenceId)) {
      entries.push({
        at: transfer.createdAt,
        what: `${text(lang, 't_ledger')}: ${transfer.type} ${formatMinor(transfer.amount, transfer.currency)} ${transfer.currency}`,
        detail: `${transfer.status} · ${transfer.debitAccountId} → ${transfer.creditAccountId}`,
      });
    }
  }
  return entries;
}

function depositEntries(lang: Lang, config: Config, mode: Mode, deposit: DepositView): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    {
      at: new Date(deposit.seen_at),
      what: `${text(lang, 't_deposit_seen')} ${deposit.block_number}: ${deposit.amount} USDT (${deposit.deposit_id})`,
      detail: TransactionLink({ lang, config, mode, txHash: deposit.tx_id }),
    },
  ];
  if (deposit.final_at)
    entries.push({
      at: new Date(deposit.final_at),
      what: html`${text(lang, 't_deposit_final')}: ${Badge({ status: deposit.status })}`,
      detail: deposit.deposit_id,
    });
  return entries;
}

function refundEntries(lang: Lang, config: Config, shop: ShopProfile, refund: RefundView): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    {
      at: new Date(refund.created_at),
      what: html`${text(lang, 't_refund_requested')} ${Link({ shop, path: 'refunds', id: refund.refund_id })}`,
      detail: `${refund.received_amount} − ${refund.network_fee} = ${refund.recipient_amount} USDT → ${refund.recipient_address}`,
    },
  ];
  if (refund.completed_at)
    entries.push({
      at: new Date(refund.completed_at),
      what: html`${text(lang, 't_refund_completed')} ${Badge({ status: refund.status })}`,
      detail: refund.tx_hash ? TransactionLink({ lang, config, mode: shop.mode, txHash: refund.tx_hash }) : null,
    });
  return entries;
}

function DepositTable(props: { lang: Lang; shop: ShopProfile; deposits: readonly DepositView[] }): View {
  const { lang } = props;
  if (props.deposits.length === 0) return html`<p>${text(lang, 'no_deposits')}</p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">${text(lang, 'col_deposit_id')}</th>
          <th scope="col">${text(lang, 'col_status')}</th>
          <th scope="col">${text(lang, 'col_amount')}</th>
          <th scope="col">${text(lang, 'col_block')}</th>
          <th scope="col">${text(lang, 'col_seen')}</th>
        </tr>
      </thead>
      <tbody>
        ${props.deposits.map(
          (deposit) =>
            html`<tr>
              <td>${Link({ shop: props.shop, path: 'deposits', id: deposit.deposit_id })}</td>
              <td>${Badge({ status: deposit.status })}</td>
              <td>${deposit.amount}</td>
              <td>${deposit.block_number}</td>
              <td>${minuteOf(deposit.seen_at)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function RefundList(props: { lang: Lang; shop: ShopProfile; refunds: readonly RefundView[] }): View {
  if (props.refunds.length === 0) return null;
  return html`<section class="card">
    <h2>${text(props.lang, 'its_refunds')}</h2>
    <ul>
      ${props.refunds.map(
        (refund) =>
          html`<li>
            ${Link({ shop: props.shop, path: 'refunds', id: refund.refund_id })} ${Badge({ status: refund.status })}
            ${refund.recipient_amount} USDT
          </li>`,
      )}
    </ul>
  </section>`;
}

interface RefundFormProps {
  readonly csrf: string;
  readonly externalId: string;
  readonly address?: string;
}

function RefundForm(props: {
  lang: Lang;
  shop: ShopProfile;
  subject: RefundSubject;
  form: RefundFormProps;
  /** After a preview the form asks for another address. */
  again?: boolean;
}): View {
  const { lang, subject } = props;
  const action = `${base(props.shop)}/${subject.kind}s/${subject.id}/refund/preview`;
  return html`<section class="card">
    <h2>${text(lang, props.again ? 'refund_change' : 'refund_title')}</h2>
    <p class="muted">${text(lang, subject.kind === 'deposit' ? 'refund_intro_deposit' : 'refund_intro_invoice')}</p>
    <form method="post" action=${action}>
      ${CsrfField({ token: props.form.csrf })}
      <input type="hidden" name="external_id" value=${props.form.externalId} />
      <label for="refund-address">${text(lang, 'refund_address')}</label>
      <input
        id="refund-address"
        name="address"
        type="text"
        required
        maxlength="100"
        autocomplete="off"
        spellcheck="false"
        value=${props.form.address ?? ''}
      />
      <div class="actions"><button type="submit">${text(lang, 'refund_preview')}</button></div>
    </form>
  </section>`;
}

export function InvoicePage(
  props: PageBase & {
    invoice: InvoiceView;
    deposits: readonly DepositRecord[];
    refunds: readonly RefundView[];
    history: readonly TimelineEntry[];
    now: Date;
    refundForm: { csrf: string; externalId: string } | undefined;
  },
): View {
  const { lang, shop, invoice } = props;
  const difference = micro(invoice.paid_amount) - micro(invoice.amount);
  const differenceText =
    difference === 0n
      ? text(lang, 'difference_none')
      : `${difference > 0n ? '+' : '−'}${usdtText(difference > 0n ? difference : -difference)} (${text(lang, difference > 0n ? 'difference_over' : 'difference_under')})`;
  const entries: TimelineEntry[] = [
    { at: new Date(invoice.created_at), what: `${text(lang, 't_invoice_created')}: ${invoice.amount} USDT` },
    ...props.deposits.flatMap((deposit) => depositEntries(lang, props.config, shop.mode, deposit)),
    ...props.refunds.flatMap((refund) => refundEntries(lang, props.config, shop, refund)),
    ...props.history,
  ];
  if (invoice.paid_at) entries.push({ at: new Date(invoice.paid_at), what: text(lang, 't_invoice_paid') });
  const expiresAt = new Date(invoice.expires_at);
  if (expiresAt <= props.now)
    entries.push({
      at: expiresAt,
      what: html`${text(lang, 't_invoice_lifetime_over')} ${Badge({ status: invoice.status })}`,
    });
  return html`
    ${Heading({ lang, shop, what: text(lang, 'invoice'), id: invoice.invoice_id, back: 'invoices', backLabel: text(lang, 'all_invoices'), networkMode: invoice.network_mode })}
    ${Facts({
      lang,
      rows: [
        [text(lang, 'col_status'), Badge({ status: invoice.status })],
        [text(lang, 'col_external_id'), invoice.external_id],
        [text(lang, 'expected'), invoice.amount],
        [text(lang, 'col_received'), invoice.paid_amount],
        [text(lang, 'difference'), differenceText],
        [text(lang, 'col_address'), html`<code>${invoice.address}</code>`],
        [text(lang, 'col_created'), minuteOf(invoice.created_at)],
        [text(lang, 'col_expires'), minuteOf(invoice.expires_at)],
        [text(lang, 'paid_at'), invoice.paid_at ? minuteOf(invoice.paid_at) : text(lang, 'none')],
      ],
    })}
    <section class="card">
      <h2>${text(lang, 'its_deposits')}</h2>
      ${DepositTable({ lang, shop, deposits: props.deposits })}
    </section>
    ${RefundList({ lang, shop, refunds: props.refunds })}
    ${props.refundForm ? RefundForm({ lang, shop, subject: { kind: 'invoice', id: invoice.invoice_id }, form: props.refundForm }) : null}
    ${Timeline({ lang, entries })}
  `;
}

export function DepositPage(
  props: PageBase & {
    deposit: DepositRecord;
    refunds: readonly RefundView[];
    history: readonly TimelineEntry[];
    refundForm: { csrf: string; externalId: string } | undefined;
  },
): View {
  const { lang, shop, deposit } = props;
  const entries = [
    ...depositEntries(lang, props.config, shop.mode, deposit),
    ...props.refunds.flatMap((refund) => refundEntries(lang, props.config, shop, refund)),
    ...props.history,
  ];
  return html`
    ${Heading({ lang, shop, what: text(lang, 'deposit'), id: deposit.deposit_id, back: 'deposits', backLabel: text(lang, 'all_deposits') })}
    ${Facts({
      lang,
      rows: [
        [text(lang, 'col_status'), Badge({ status: deposit.status })],
        [text(lang, 'col_amount'), deposit.amount],
        [text(lang, 'col_address'), html`<code>${deposit.address}</code>`],
        [text(lang, 'from_address'), html`<code>${deposit.from_address}</code>`],
        [text(lang, 'col_tx'), TransactionLink({ lang, config: props.config, mode: shop.mode, txHash: deposit.tx_id })],
        [text(lang, 'col_block'), String(deposit.block_number)],
        [
          text(lang, 'col_confirmations'),
          deposit.confirmations === null
            ? text(lang, 'none')
            : `${deposit.confirmations} (${text(lang, 'confirming_note')})`,
        ],
        [text(lang, 'col_invoice_id'), Link({ shop, path: 'invoices', id: deposit.invoice_id })],
        [text(lang, 'col_wallet_id'), Link({ shop, path: 'wallets', id: deposit.wallet_id })],
        [text(lang, 'col_seen'), minuteOf(deposit.seen_at)],
        [text(lang, 'final_at'), deposit.final_at ? minuteOf(deposit.final_at) : text(lang, 'none')],
      ],
    })}
    ${RefundList({ lang, shop, refunds: props.refunds })}
    ${props.refundForm ? RefundForm({ lang, shop, subject: { kind: 'deposit', id: deposit.deposit_id }, form: props.refundForm }) : null}
    ${Timeline({ lang, entries })}
  `;
}

export function WalletPage(
  props: PageBase & { wallet: WalletView; history: readonly TimelineEntry[]; manage: string | undefined },
): View {
  const { lang, shop, wallet } = props;
  const action = wallet.status === 'active' ? 'block' : 'unblock';
  const entries: TimelineEntry[] = [
    { at: new Date(wallet.created_at), what: `${text(lang, 't_wallet_created')}: ${wallet.client_id}` },
    ...(wallet.deposits ?? []).flatMap((deposit) => depositEntries(lang, props.config, shop.mode, deposit)),
    ...props.history,
  ];
  if (wallet.updated_at !== wallet.created_at)
    entries.push({
      at: new Date(wallet.updated_at),
      what: html`${text(lang, 't_wallet_changed')}: ${Badge({ status: wallet.status })}`,
    });
  return html`
    ${Heading({ lang, shop, what: text(lang, 'wallet'), id: wallet.wallet_id, back: 'wallets', backLabel: text(lang, 'all_wallets'), networkMode: wallet.network_mode })}
    ${Facts({
      lang,
      rows: [
        [text(lang, 'col_status'), Badge({ status: wallet.status })],
        [text(lang, 'col_client_id'), wallet.client_id],
        [text(lang, 'col_address'), html`<code>${wallet.address}</code>`],
        [text(lang, 'col_received'), wallet.received_amount],
        [text(lang, 'col_held'), wallet.held_amount],
        [text(lang, 'col_created'), minuteOf(wallet.created_at)],
      ],
    })}
    ${
      props.manage
        ? html`<section class="card">
            <p class="muted">${text(lang, 'blocked_intro')}</p>
            <form method="post" action=${`${base(shop)}/wallets/${wallet.wallet_id}/${action}`}>
              ${CsrfField({ token: props.manage })}
              <button type="submit" class=${action === 'block' ? 'danger' : 'secondary'}>${text(lang, action)}</button>
            </form>
          </section>`
        : null
    }
    <section class="card">
      <h2>${text(lang, 'its_deposits')}</h2>
      ${DepositTable({ lang, shop, deposits: wallet.deposits ?? [] })}
    </section>
    ${Timeline({ lang, entries })}
  `;
}

export function RefundPage(props: PageBase & { refund: RefundView; history: readonly TimelineEntry[] }): View {
  const { lang, shop, refund } = props;
  const entries = [...refundEntries(lang, props.config, shop, refund), ...props.history];
  if (refund.status === 'failed' && refund.error)
    entries.push({
      at: new Date(refund.completed_at ?? refund.created_at),
      what: `${text(lang, 't_refund_failed')}: ${refund.error.code}`,
      detail: refund.error.message,
    });
  return html`
    ${Heading({ lang, shop, what: text(lang, 'refund'), id: refund.refund_id, back: 'refunds', backLabel: text(lang, 'all_refunds') })}
    ${Facts({
      lang,
      rows: [
        [text(lang, 'col_status'), Badge({ status: refund.status })],
        [text(lang, 'col_external_id'), refund.external_id],
        [
          text(lang, 'col_for'),
          refund.deposit_id
            ? Link({ shop, path: 'deposits', id: refund.deposit_id })
            : Link({ shop, path: 'invoices', id: refund.invoice_id }),
        ],
        [
          text(lang, 'refund_deposits'),
          html`${refund.deposit_ids.map((id) => html`${Link({ shop, path: 'deposits', id })} `)}`,
        ],
        [text(lang, 'col_received'), refund.received_amount],
        [text(lang, 'col_network_fee'), refund.network_fee],
        [text(lang, 'col_sent_back'), refund.recipient_amount],
        [text(lang, 'col_recipient'), html`<code>${refund.recipient_address}</code>`],
        [
          text(lang, 'col_tx'),
          refund.tx_hash
            ? TransactionLink({ lang, config: props.config, mode: shop.mode, txHash: refund.tx_hash })
            : text(lang, 'none'),
        ],
        [text(lang, 'held_flag'), refund.held ? '✓' : text(lang, 'none')],
        [text(lang, 'error'), refund.error ? `${refund.error.code}: ${refund.error.message}` : text(lang, 'none')],
        [text(lang, 'col_created'), minuteOf(refund.created_at)],
        [text(lang, 'completed_at'), refund.completed_at ? minuteOf(refund.completed_at) : text(lang, 'none')],
      ],
    })}
    ${Timeline({ lang, entries })}
  `;
}

/** The refund form again, with the quote to confirm (a preview) or what was wrong (an error). */
export function RefundFormPage(props: {
  lang: Lang;
  shop: ShopProfile;
  subject: RefundSubject;
  form: RefundFormProps;
  quote?: RefundQuote;
  error?: string;
}): View {
  const { lang, shop, subject, quote } = props;
  const back = `${base(shop)}/${subject.kind}s/${subject.id}`;
  return html`
    <p>
      <a href=${back}>${text(lang, subject.kind)} <code>${subject.id}</code></a>
    </p>
    <h1>${text(lang, 'refund_title')}</h1>
    ${
      quote
        ? html`<section class="card">
            <h2>${text(lang, 'refund_quote')}</h2>
            <dl class="facts">
              <dt>${text(lang, 'col_recipient')}</dt>
              <dd><code>${props.form.address}</code></dd>
              <dt>${text(lang, 'refund_deposits')}</dt>
              <dd>${quote.depositIds.map((id) => html`<code>${id}</code> `)}</dd>
              <dt>${text(lang, 'col_received')}</dt>
              <dd>${usdtText(quote.receivedMicro)}</dd>
              <dt>${text(lang, 'col_network_fee')}</dt>
              <dd>${usdtText(quote.networkFeeMicro)}</dd>
              <dt>${text(lang, 'col_sent_back')}</dt>
              <dd><strong>${usdtText(quote.amountMicro)}</strong></dd>
            </dl>
            <form method="post" action=${`${back}/refund`}>
              ${CsrfField({ token: props.form.csrf })}
              <input type="hidden" name="external_id" value=${props.form.externalId} />
              <input type="hidden" name="address" value=${props.form.address ?? ''} />
              <div class="actions"><button type="submit" class="danger">${text(lang, 'refund_confirm')}</button></div>
            </form>
          </section>`
        : null
    }
    ${RefundForm({ lang, shop, subject, form: props.form, again: quote !== undefined })}
  `;
}
