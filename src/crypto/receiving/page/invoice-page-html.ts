// Server-rendered HTML of the hosted crypto invoice page, inside the hosted pages'
// layout (hosted-pages/page-layout.ts): the amount, the address with a copy
// button, the QR code of the payment URI, a countdown and the status, kept
// current by polling a small status JSON (the script is allowed by a CSP nonce).
import type { Lang } from '../../../hosted-pages/page-language.ts';
import { escapeHtml, timeLeftExpression } from '../../../hosted-pages/page-layout.ts';
import type { InvoiceView } from '../invoice-service.ts';
import { formatUsdt, invoiceText, type InvoicePageTextKey } from './invoice-page-i18n.ts';

/** How often the page asks for the invoice's status. */
const STATUS_POLL_INTERVAL_MS = 3000;

const EXTRA_STYLE = `.address{display:block;word-break:break-all;font:1rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f3f4f6;padding:.6rem;border-radius:8px;margin:.25rem 0 0}
.warning{font-size:.9rem}`;

export interface InvoicePage {
  readonly invoice: InvoiceView;
  readonly shopName: string;
  readonly sandbox: boolean;
  readonly qrSvg: string;
}

type StatusKind = InvoiceView['status'] | 'badRequest' | 'notFound' | 'tooMany' | 'internal';

const STATUS_CARDS: Readonly<
  Record<StatusKind, readonly [InvoicePageTextKey, InvoicePageTextKey, 'ok' | 'error' | '']>
> = {
  pending: ['pendingTitle', 'pendingText', ''],
  confirming: ['confirmingTitle', 'confirmingText', ''],
  paid: ['paidTitle', 'paidText', 'ok'],
  overpaid: ['overpaidTitle', 'overpaidText', 'ok'],
  underpaid: ['underpaidTitle', 'underpaidText', 'error'],
  expired: ['expiredTitle', 'expiredText', 'error'],
  badRequest: ['badRequestTitle', 'badRequestText', 'error'],
  notFound: ['notFoundTitle', 'notFoundText', 'error'],
  tooMany: ['tooManyTitle', 'tooManyText', 'error'],
  internal: ['internalTitle', 'internalText', 'error'],
};

export function invoiceStatusCard(lang: Lang, kind: StatusKind): string {
  const [title, body, tone] = STATUS_CARDS[kind];
  return `<section class="card notice ${tone}" role="status" aria-live="polite" id="status" data-status="${kind}"><h2>${invoiceText(lang, title)}</h2><p>${invoiceText(lang, body)}</p></section>`;
}

/** Whether the payer should still be shown where to send money. */
function acceptsPayment(status: InvoiceView['status']): boolean {
  return status === 'pending' || status === 'confirming';
}

function summary(lang: Lang, page: InvoicePage): string {
  const { invoice } = page;
  const rows = [
    `<dt>${invoiceText(lang, 'payTo')}</dt><dd>${escapeHtml(page.shopName)}</dd>`,
    `<dt>${invoiceText(lang, 'order')}</dt><dd>${escapeHtml(invoice.external_id)}</dd>`,
    `<dt>${invoiceText(lang, 'amount')}</dt><dd data-testid="amount">${formatUsdt(lang, invoice.amount)}</dd>`,
    `<dt>${invoiceText(lang, 'network')}</dt><dd>${invoiceText(lang, 'networkName')}</dd>`,
    `<dt>${invoiceText(lang, 'paid')}</dt><dd data-testid="paid-amount">${formatUsdt(lang, invoice.paid_amount)}</dd>`,
  ];
  if (invoice.status === 'pending') {
    rows.push(
      `<dt>${invoiceText(lang, 'timeLeft')}</dt><dd><time id="countdown" datetime="${invoice.expires_at}">${invoiceText(lang, 'expiresAt')} ${invoice.expires_at.slice(11, 16)} UTC</time></dd>`,
    );
  }
  return `<section class="card" aria-labelledby="title"><h1 id="title">${invoiceText(lang, 'title')}</h1>${testMoneyNotice(lang, page)}<dl>${rows.join('')}</dl></section>`;
}

/** A sandbox shop's simulated chain, or a live shop's invoice on a testnet: the payer must not send real USDT. */
function testMoneyNotice(lang: Lang, page: InvoicePage): string {
  if (page.sandbox) return `<p class="notice" role="note">${invoiceText(lang, 'sandboxNotice')}</p>`;
  if (page.invoice.network_mode === 'testnet')
    return `<p class="notice" role="note" data-testid="testnet-marker">${invoiceText(lang, 'testnetNotice')}</p>`;
  return '';
}

function paymentDetails(lang: Lang, page: InvoicePage): string {
  const { invoice } = page;
  return `<section class="card" aria-labelledby="address-title"><h2 id="address-title">${invoiceText(lang, 'address')}</h2>
<p>${invoiceText(lang, 'scanQr')}</p><div class="qr" role="img" aria-label="QR: ${escapeHtml(invoice.payment_uri)}" data-testid="qr">${page.qrSvg}</div>
<code class="address" id="address" data-testid="address">${escapeHtml(invoice.address)}</code>
<button type="button" id="copy-address" data-copied="${escapeHtml(invoiceText(lang, 'copied'))}">${invoiceText(lang, 'copy')}</button>
<p><a class="button" href="${escapeHtml(invoice.payment_uri)}" rel="noreferrer">${invoiceText(lang, 'openWallet')}</a></p>
<p class="notice warning" role="note">${invoiceText(lang, 'onlyUsdt')}</p></section>`;
}

export function invoicePageBody(lang: Lang, page: InvoicePage, nonce: string): string {
  const details = acceptsPayment(page.invoice.status) ? paymentDetails(lang, page) : '';
  return `<style nonce="${nonce}">${EXTRA_STYLE}</style>${summary(lang, page)}${invoiceStatusCard(lang, page.invoice.status)}${details}`;
}

/**
 * The page's one script: the countdown (from the server's "now", so a wrong
 * device clock does not matter), the copy button (selecting the address where
 * the clipboard is refused), and a poll of the status JSON
 * that reloads the page when the invoice changes.
 */
export function invoicePageScript(lang: Lang, page: InvoicePage, nowMs: number): string {
  const { invoice } = page;
  const left = Math.max(0, Date.parse(invoice.expires_at) - nowMs);
  const statusUrl = `/pay/crypto/${encodeURIComponent(invoice.invoice_id)}/status`;
  const shown = JSON.stringify({ status: invoice.status, paid_amount: invoice.paid_amount });
  return `(function(){
var el=document.getElementById('countdown');var left=${left};var start=Date.now();
function tick(){if(!el)return;var ms=left-(Date.now()-start);if(ms<=0){location.reload();return;}var s=Math.floor(ms/1000);
el.textContent=${timeLeftExpression(lang, 's')};}
tick();setInterval(tick,1000);
var copy=document.getElementById('copy-address');
if(copy){copy.addEventListener('click',function(){var address=document.getElementById('address');
var done=function(){copy.textContent=copy.getAttribute('data-copied');};
var select=function(){var range=document.createRange();range.selectNodeContents(address);var selection=getSelection();selection.removeAllRanges();selection.addRange(range);};
if(navigator.clipboard){navigator.clipboard.writeText(address.textContent).then(done,select);}else{select();}});}
var shown=${shown};
${acceptsPayment(invoice.status) ? '' : 'return;'}
setInterval(function(){fetch(${JSON.stringify(statusUrl)},{cache:'no-store'}).then(function(r){return r.ok?r.json():null;}).then(function(now){
if(now&&(now.status!==shown.status||now.paid_amount!==shown.paid_amount))location.reload();},function(){});},${STATUS_POLL_INTERVAL_MS});
})();`;
}
