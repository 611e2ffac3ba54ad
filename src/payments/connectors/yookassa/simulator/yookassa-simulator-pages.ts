// The simulator's pages: YooKassa's confirmation page for a card or SberPay
// payment (approve, decline, a 3-D Secure passcode step) and the "bank app"
// that pays an SBP QR link. Plain HTML forms, readable on a phone, no scripts.
import { escapeHtml } from '../../../../hosted-pages/page-layout.ts';
import { formatMinor } from '../../../../money/decimal.ts';
import type { SimulatedPayment } from './yookassa-simulator-api.ts';

function page(title: string, body: string): string {
  return `<!doctype html><html lang="ru"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>body{font-family:sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}button{display:block;width:100%;margin:.5rem 0;padding:.75rem;font-size:1rem}label{display:block;margin:.5rem 0}input{font-size:1rem;padding:.5rem;width:100%;box-sizing:border-box}</style></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

function summary(payment: SimulatedPayment): string {
  return `<p>${escapeHtml(payment.description ?? `Платеж ${payment.id}`)}</p><p><strong>${formatMinor(payment.amountKopecks, 'RUB')} ₽</strong></p>`;
}

function methodName(payment: SimulatedPayment): string {
  return payment.methodType === 'sberbank' ? 'SberPay' : 'bank card';
}

export function confirmationPage(payment: SimulatedPayment): string {
  const action = `/checkout/payments/v2/contract?orderId=${encodeURIComponent(payment.id)}`;
  return page(
    `YooKassa simulator: pay by ${methodName(payment)}`,
    `${summary(payment)}<form method="post" action="${escapeHtml(action)}">` +
      '<button name="action" value="pay">Pay (approve)</button>' +
      '<button name="action" value="3ds">Pay with 3-D Secure</button>' +
      '<button name="action" value="decline_funds">Decline: insufficient funds</button>' +
      '<button name="action" value="decline">Decline</button></form>',
  );
}

export function threeDsPage(payment: SimulatedPayment, passcode: string): string {
  const action = `/checkout/3ds?orderId=${encodeURIComponent(payment.id)}`;
  return page(
    'YooKassa simulator: 3-D Secure',
    `${summary(payment)}<form method="post" action="${escapeHtml(action)}">` +
      `<label for="code">One-time passcode (${escapeHtml(passcode)} passes)</label>` +
      '<input id="code" name="code" autocomplete="one-time-code" inputmode="text">' +
      '<button>Confirm</button></form>',
  );
}

export function bankAppPage(payment: SimulatedPayment): string {
  return page(
    'YooKassa simulator: bank app (SBP)',
    `${summary(payment)}<form method="post">` +
      '<button name="action" value="pay">Pay</button><button name="action" value="decline">Decline</button></form>',
  );
}

export function resultPage(payment: SimulatedPayment): string {
  return page('YooKassa simulator: payment', `${summary(payment)}<p>Status: ${escapeHtml(payment.status)}</p>`);
}
