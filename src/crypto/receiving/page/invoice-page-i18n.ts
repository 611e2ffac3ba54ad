// Texts of the hosted crypto invoice page in Russian and English; the language
// is chosen as on every hosted page (hosted-pages/page-language.ts).
import { groupThousands, translator, type Lang } from '../../../hosted-pages/page-language.ts';

const TEXTS = {
  title: { ru: 'Оплата в USDT', en: 'Pay with USDT' },
  payTo: { ru: 'Получатель', en: 'Pay to' },
  order: { ru: 'Заказ', en: 'Order' },
  amount: { ru: 'Сумма', en: 'Amount' },
  paid: { ru: 'Получено', en: 'Received' },
  network: { ru: 'Сеть', en: 'Network' },
  networkName: { ru: 'TRON (TRC20)', en: 'TRON (TRC20)' },
  timeLeft: { ru: 'Время на оплату', en: 'Time left' },
  expiresAt: { ru: 'Оплатить до', en: 'Pay before' },
  address: { ru: 'Адрес для оплаты', en: 'Deposit address' },
  copy: { ru: 'Скопировать адрес', en: 'Copy address' },
  copied: { ru: 'Адрес скопирован', en: 'Address copied' },
  scanQr: {
    ru: 'Отсканируйте QR-код в кошельке или отправьте ровно указанную сумму на адрес.',
    en: 'Scan the QR code in your wallet, or send exactly the amount to the address.',
  },
  onlyUsdt: {
    ru: 'Отправляйте только USDT в сети TRON (TRC20). Другие монеты и сети будут потеряны.',
    en: 'Send only USDT on the TRON network (TRC20). Other coins and networks are lost.',
  },
  openWallet: { ru: 'Открыть в кошельке', en: 'Open in a wallet' },
  sandboxNotice: {
    ru: 'Тестовый режим: сеть смоделирована, деньги не списываются.',
    en: 'Test mode: the network is simulated, no real money moves.',
  },
  pendingTitle: { ru: 'Ожидаем оплату', en: 'Waiting for the payment' },
  pendingText: {
    ru: 'Страница обновится сама, когда перевод появится в сети.',
    en: 'This page updates by itself when the transfer appears on the network.',
  },
  confirmingTitle: { ru: 'Перевод получен, ждём подтверждений', en: 'Transfer received, waiting for confirmations' },
  confirmingText: { ru: 'Обычно это около минуты.', en: 'This usually takes about a minute.' },
  paidTitle: { ru: 'Оплата получена', en: 'Payment received' },
  paidText: { ru: 'Спасибо! Магазин получил уведомление об оплате.', en: 'Thank you! The shop has been notified.' },
  overpaidTitle: { ru: 'Оплата получена (больше суммы счёта)', en: 'Payment received (more than the amount)' },
  overpaidText: {
    ru: 'Магазин получил всю сумму и уведомление об оплате.',
    en: 'The shop received the whole sum and has been notified.',
  },
  underpaidTitle: { ru: 'Получено меньше суммы счёта', en: 'Less than the amount was received' },
  underpaidText: {
    ru: 'Свяжитесь с магазином, чтобы доплатить или вернуть деньги.',
    en: 'Contact the shop to pay the rest or get a refund.',
  },
  expiredTitle: { ru: 'Время на оплату истекло', en: 'This invoice has expired' },
  expiredText: {
    ru: 'Не отправляйте деньги на этот адрес. Вернитесь в магазин, чтобы создать новый счёт.',
    en: 'Do not send money to this address. Return to the shop to get a new invoice.',
  },
  badRequestTitle: { ru: 'Ссылка повреждена', en: 'This link is broken' },
  badRequestText: { ru: 'Откройте ссылку на оплату ещё раз, целиком.', en: 'Open the whole payment link again.' },
  notFoundTitle: { ru: 'Счёт не найден', en: 'Invoice not found' },
  notFoundText: { ru: 'Проверьте ссылку на оплату.', en: 'Check the payment link.' },
  tooManyTitle: { ru: 'Слишком много запросов', en: 'Too many requests' },
  tooManyText: { ru: 'Подождите минуту и обновите страницу.', en: 'Wait a minute and reload the page.' },
  internalTitle: { ru: 'Что-то пошло не так', en: 'Something went wrong' },
  internalText: {
    ru: 'Это ошибка на нашей стороне. Обновите страницу через минуту.',
    en: 'This is an error on our side. Reload the page in a minute.',
  },
} as const;

export type InvoicePageTextKey = keyof typeof TEXTS;

export const invoiceText = translator(TEXTS);

/** "1 500,5 USDT" / "1,500.5 USDT" from the API's decimal string. */
export function formatUsdt(lang: Lang, decimal: string): string {
  const [whole = '0', fraction] = decimal.split('.');
  const separator = lang === 'ru' ? ',' : '.';
  return `${groupThousands(lang, whole)}${fraction ? `${separator}${fraction}` : ''}\u00a0USDT`;
}
