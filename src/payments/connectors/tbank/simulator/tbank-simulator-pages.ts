// The simulator's pages: T-Bank's hosted payment form (approve, decline, a
// 3-D Secure passcode step) and the "bank app" that pays an SBP or SberPay
// link. Plain HTML forms, readable on a phone, no scripts.
import { escapeHtml } from '../../../../hosted-pages/page-layout.ts';
import type { SimulatedSession } from './tbank-simulator-api.ts';

function rubles(kopecks: number): string {
  return `${Math.floor(kopecks / 100)}.${String(kopecks % 100).padStart(2, '0')} ₽`;
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="ru"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>body{font-family:sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}button{display:block;width:100%;margin:.5rem 0;padding:.75rem;font-size:1rem}label{display:block;margin:.5rem 0}</style></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

function summary(session: SimulatedSession): string {
  return `<p>${escapeHtml(session.description || `Заказ ${session.orderId}`)}</p><p><strong>${rubles(session.amount)}</strong></p>`;
}

export function paymentFormPage(session: SimulatedSession): string {
  return page(
    'T-Bank simulator: payment form',
    `${summary(session)}<form method="post" action="/new/${escapeHtml(session.formCode)}">` +
      '<button name="action" value="pay">Pay (approve)</button>' +
      '<button name="action" value="3ds">Pay with 3-D Secure</button>' +
      '<button name="action" value="decline_funds">Decline: insufficient funds</button>' +
      '<button name="action" value="decline">Decline</button></form>',
  );
}

export function threeDsPage(session: SimulatedSession): string {
  return page(
    'T-Bank simulator: 3-D Secure',
    `${summary(session)}<form method="post" action="/new/${escapeHtml(session.formCode)}/3ds">` +
      '<label for="code">One-time passcode (1qwezxc passes)</label><input id="code" name="code" autocomplete="one-time-code">' +
      '<button>Confirm</button></form>',
  );
}

export function bankAppPage(session: SimulatedSession): string {
  return page(
    'T-Bank simulator: bank app',
    `${summary(session)}<form method="post">` +
      '<button name="action" value="pay">Pay</button><button name="action" value="decline">Decline</button></form>',
  );
}

export function resultPage(session: SimulatedSession): string {
  return page('T-Bank simulator: payment', `${summary(session)}<p>Status: ${escapeHtml(session.status)}</p>`);
}
