// Server-rendered HTML of the payment page, inside the hosted pages' layout
// (hosted-pages/page-layout.ts): the summary, the method choice, labelled forms
// with the autocomplete tokens browsers use for cards, the waiting states of a
// live charge, and the page's scripts (countdown, status poll).
import type { Lang } from '../../hosted-pages/page-language.ts';
import { escapeHtml, timeLeftExpression } from '../../hosted-pages/page-layout.ts';
import type { PaymentMethod } from '../payment-tables.ts';
import { formatMoney, text } from './page-i18n.ts';
import type { PageState, PayerStatus } from './payment-page-service.ts';

export function summary(lang: Lang, state: PageState, totalKopecks: bigint | undefined): string {
  const payment = state.payment;
  const total = totalKopecks ?? payment.amount_total_kopecks;
  const rows = [
    `<dt>${text(lang, 'payTo')}</dt><dd>${escapeHtml(state.shopName)}</dd>`,
    payment.order_id ? `<dt>${text(lang, 'order')}</dt><dd>${escapeHtml(payment.order_id)}</dd>` : '',
    `<dt>${text(lang, 'amount')}</dt><dd data-testid="amount">${formatMoney(lang, payment.amount_kopecks)}</dd>`,
    `<dt>${text(lang, 'total')}</dt><dd data-testid="amount-total">${formatMoney(lang, total)}${
      total > payment.amount_kopecks ? ` <span class="muted">(${text(lang, 'fee')})</span>` : ''
    }</dd>`,
  ];
  if (state.status === 'pending') {
    const expires = payment.expires_at.toISOString();
    rows.push(
      `<dt>${text(lang, 'timeLeft')}</dt><dd><time id="countdown" datetime="${expires}" aria-live="off">${text(lang, 'expiresAt')} ${expires.slice(11, 16)} UTC</time></dd>`,
    );
  }
  const sandbox =
    state.shopMode === 'sandbox' ? `<p class="notice" role="note">${text(lang, 'sandboxNotice')}</p>` : '';
  return `<section class="card" aria-labelledby="title"><h1 id="title">${text(lang, 'title')}</h1>${sandbox}<dl>${rows.join('')}</dl></section>`;
}

/** Counts down to expires_at using the server's "now", so a wrong device clock does not matter. */
export function countdownScript(lang: Lang, expiresAtMs: number, nowMs: number): string {
  return `(function(){var el=document.getElementById('countdown');if(!el)return;var left=${Math.max(0, expiresAtMs - nowMs)};var start=Date.now();
function tick(){var ms=left-(Date.now()-start);if(ms<=0){location.reload();return;}var s=Math.floor(ms/1000);
el.textContent=${timeLeftExpression(lang, 's')};}
tick();setInterval(tick,1000);})();`;
}

export function methodChoice(lang: Lang, orderCode: string, options: PageState['options']): string {
  const items = options
    .map(
      (option) =>
        `<li><a href="/pay/${orderCode}?method=${option.method}&amp;lang=${lang}" data-method="${option.method}"><span>${text(lang, `method_${option.method}`)}</span><span>${formatMoney(lang, option.totalKopecks)}</span></a></li>`,
    )
    .join('');
  return `<section class="card" aria-labelledby="choose"><h2 id="choose">${text(lang, 'chooseMethod')}</h2><ul class="methods">${items}</ul></section>`;
}

function hidden(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('');
}

export interface FormContext {
  readonly lang: Lang;
  readonly orderCode: string;
  readonly csrf: string;
  readonly attempt: string;
  readonly canChangeMethod: boolean;
}

function changeMethodLink(form: FormContext): string {
  return form.canChangeMethod
    ? `<p><a href="/pay/${form.orderCode}?lang=${form.lang}">${text(form.lang, 'changeMethod')}</a></p>`
    : '';
}

/**
 * The card step. `cardFields` only for the sandbox: a live shop's payer enters the
 * card at the acquirer's own page (the button sends them there), so card data never
 * reaches Paygate in live mode (docs/security.md, SAQ A).
 */
export function cardForm(form: FormContext, error: string | undefined, cardFields = true): string {
  const { lang } = form;
  const alert = error ? `<div class="notice error" role="alert">${error}</div>` : '';
  const head = `<section class="card" aria-labelledby="card-title"><h2 id="card-title">${text(lang, 'method_card')}</h2>${alert}
<form method="post" action="/pay/${form.orderCode}/card" autocomplete="on" id="card-form">
${hidden({ csrf: form.csrf, attempt: form.attempt, lang })}`;
  if (!cardFields)
    return `${head}
<button type="submit" id="pay-button">${text(lang, 'pay')}</button>
</form>${changeMethodLink(form)}</section>`;
  return `${head}
<label for="cc-number">${text(lang, 'cardNumber')}</label>
<input id="cc-number" name="cc-number" autocomplete="cc-number" inputmode="numeric" pattern="[0-9 ]{12,23}" maxlength="23" required placeholder="0000 0000 0000 0000">
<div class="row"><div>
<label for="cc-exp">${text(lang, 'cardExpiry')}</label>
<input id="cc-exp" name="cc-exp" autocomplete="cc-exp" inputmode="numeric" pattern="(0[1-9]|1[0-2]) ?/ ?([0-9]{2})" maxlength="7" required placeholder="MM/YY">
</div><div>
<label for="cc-csc">${text(lang, 'cardCsc')}</label>
<input id="cc-csc" name="cc-csc" autocomplete="cc-csc" inputmode="numeric" pattern="[0-9]{3,4}" maxlength="4" required type="password">
</div></div>
<label for="cc-name">${text(lang, 'cardName')}</label>
<input id="cc-name" name="cc-name" autocomplete="cc-name" maxlength="100">
<button type="submit" id="pay-button">${text(lang, 'pay')}</button>
</form>${changeMethodLink(form)}</section>`;
}

/**
 * The QR step. The deep link opens the payer's bank app when the page is on the
 * phone itself, so on narrow screens it comes before the QR (layout CSS, `.qr-step`).
 * `waiting`: a live charge's QR, whose payment arrives behind the page's back.
 */
export function qrForm(
  form: FormContext,
  method: Exclude<PaymentMethod, 'card'>,
  qr: { readonly svg: string; readonly link: string },
  mode: 'sandbox' | 'waiting',
): string {
  const { lang } = form;
  const sandboxButton =
    mode === 'sandbox'
      ? `<form method="post" action="/pay/${form.orderCode}/qr">${hidden({ csrf: form.csrf, attempt: form.attempt, lang, method })}<button type="submit" id="pay-button">${text(lang, 'sandboxPay')}</button></form>`
      : '';
  const waiting =
    mode === 'waiting'
      ? `<div class="notice" role="status" data-status="waiting_for_payer"><p><strong>${text(lang, 'qrWaitingTitle')}</strong></p><p>${text(lang, 'qrWaitingText')}</p></div>`
      : '';
  return `<section class="card qr-step" aria-labelledby="qr-title"><h2 id="qr-title">${text(lang, `method_${method}`)}</h2>${waiting}
<p>${text(lang, 'scanQr')}</p><div class="qr" role="img" aria-label="QR">${qr.svg}</div>
<p class="open-app"><a class="button" id="open-bank-app" href="${escapeHtml(qr.link)}" rel="noreferrer">${text(lang, 'openBankApp')}</a></p>${sandboxButton}${changeMethodLink(form)}</section>`;
}

/** A live shop's SBP or SberPay before any charge: the acquirer makes the QR when the payer asks for it. */
export function qrStartForm(form: FormContext, method: Exclude<PaymentMethod, 'card'>): string {
  const { lang } = form;
  return `<section class="card" aria-labelledby="qr-title"><h2 id="qr-title">${text(lang, `method_${method}`)}</h2>
<form method="post" action="/pay/${form.orderCode}/qr">${hidden({ csrf: form.csrf, attempt: form.attempt, lang, method })}<button type="submit" id="pay-button">${text(lang, 'pay')}</button></form>${changeMethodLink(form)}</section>`;
}

export function confirmForm(form: FormContext, chargeKey: string): string {
  const { lang } = form;
  const fields = hidden({ csrf: form.csrf, charge: chargeKey, lang });
  return `<section class="card" aria-labelledby="confirm-title"><h2 id="confirm-title">${text(lang, 'confirmTitle')}</h2><p>${text(lang, 'confirmText')}</p>
<form method="post" action="/pay/${form.orderCode}/confirm">${fields}<button type="submit" name="decision" value="approve" id="confirm-button">${text(lang, 'confirm')}</button>
<button type="submit" name="decision" value="cancel" class="secondary" id="cancel-button">${text(lang, 'cancel')}</button></form></section>`;
}

export type StatusCardKind =
  | 'paid'
  | 'failed'
  | 'expired'
  | 'declined'
  | 'declinedAtBank'
  | 'notFound'
  | 'csrf'
  | 'unavailable'
  | 'badRequest'
  | 'tooLarge'
  | 'tooMany'
  | 'internal';

export function statusCard(lang: Lang, kind: StatusCardKind, extra = ''): string {
  const titles = {
    paid: ['paidTitle', 'paidText', 'ok'],
    failed: ['failedTitle', 'failedText', 'error'],
    expired: ['expiredTitle', 'expiredText', 'error'],
    declined: ['declinedTitle', 'declinedText', 'error'],
    declinedAtBank: ['declinedAtBankTitle', 'declinedAtBankText', 'error'],
    notFound: ['notFoundTitle', 'notFoundText', 'error'],
    csrf: ['csrfTitle', 'csrfText', 'error'],
    unavailable: ['unavailableTitle', 'unavailableText', 'error'],
    badRequest: ['badRequestTitle', 'badRequestText', 'error'],
    tooLarge: ['tooLargeTitle', 'tooLargeText', 'error'],
    tooMany: ['tooManyTitle', 'tooManyText', 'error'],
    internal: ['internalTitle', 'internalText', 'error'],
  } as const;
  const [title, body, tone] = titles[kind];
  return `<section class="card notice ${tone}" role="status" data-status="${kind}"><h2>${text(lang, title)}</h2><p>${text(lang, body)}</p>${extra}</section>`;
}

/** Where `checkAgainUrl` leads: the return route, which may ask the acquirer once (rate limited). */
export function checkAgainUrl(lang: Lang, orderCode: string): string {
  return `/pay/${orderCode}/return?lang=${lang}`;
}

/**
 * A live charge the page waits on: `processing` (the acquirer holds it) or
 * `returned` (the payer is back from the acquirer's page before its answer).
 * The poll script updates the page; without JavaScript the link (and the
 * layout's noscript refresh) asks again.
 */
export function waitingCard(
  lang: Lang,
  orderCode: string,
  kind: 'processing' | 'returned',
  acquirerPageUrl?: string | undefined,
): string {
  const back =
    kind === 'returned' && acquirerPageUrl && /^https?:\/\//.test(acquirerPageUrl)
      ? `<a class="button" href="${escapeHtml(acquirerPageUrl)}" rel="noreferrer">${text(lang, 'backToBank')}</a>`
      : '';
  const check = `<p><a href="${checkAgainUrl(lang, orderCode)}" id="check-again">${text(lang, 'checkAgain')}</a></p>`;
  const status = kind === 'processing' ? 'processing' : 'waiting_for_bank';
  return `<section class="card notice" role="status" data-status="${status}"><h2>${text(lang, `${kind}Title`)}</h2><p>${text(lang, `${kind}Text`)}</p>${back}${check}</section>`;
}

/**
 * The step between our card button and the acquirer's page. The form's POST
 * answers with our own page (the CSP's `form-action 'self'` also covers the
 * redirects of a form submission, so a 303 straight to the acquirer is blocked
 * by browsers); this page then leaves by script, or by the no-script refresh, or
 * by the button.
 */
export function toBankCard(lang: Lang, acquirerPageUrl: string): string {
  return `<section class="card notice" role="status" data-status="to_bank"><h2>${text(lang, 'toBankTitle')}</h2><p>${text(lang, 'toBankText')}</p><a class="button" id="to-bank" href="${escapeHtml(acquirerPageUrl)}" rel="noreferrer">${text(lang, 'toBankButton')}</a></section>`;
}

/** Sends the browser on to the acquirer's page without keeping this step in its history. */
export function toBankScript(acquirerPageUrl: string): string {
  return `location.replace(${JSON.stringify(acquirerPageUrl).replace(/</g, '\\u003c')});`;
}

/** Polls at most this often, backing off to the slowest pace while nothing changes. */
const POLL_FIRST_DELAY_MS = 2_000;
const POLL_SLOWEST_DELAY_MS = 10_000;
/** A page left open stops asking after this many polls (about an hour); "check again" still works. */
const POLLS_MAX = 400;

/**
 * Polls `/pay/{order_code}/status` (our database only) while the page waits on a
 * charge; when the payment or its stage differs from what the page shows, it goes
 * to `nextUrl`, which renders the new state. Errors and 429s only slow it down.
 */
export function statusPollScript(orderCode: string, shown: PayerStatus, nextUrl: string): string {
  return `(function(){var url=${JSON.stringify(`/pay/${orderCode}/status`)};var next=${JSON.stringify(nextUrl)};
var shown=${JSON.stringify(shown)};var delay=${POLL_FIRST_DELAY_MS};var polls=0;
function later(){if(++polls>${POLLS_MAX})return;setTimeout(poll,delay);delay=Math.min(${POLL_SLOWEST_DELAY_MS},Math.round(delay*1.5));}
function poll(){fetch(url,{cache:'no-store',credentials:'same-origin',headers:{accept:'application/json'}})
.then(function(r){return r.ok?r.json():null;})
.then(function(now){if(now&&(now.status!==shown.status||now.stage!==shown.stage)){location.replace(next);return;}later();},later);}
later();})();`;
}
