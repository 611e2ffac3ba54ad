// Texts of the payment page in Russian and English; the language is chosen as
// on every hosted page (hosted-pages/page-language.ts).
import { groupThousands, translator, type Lang } from '../../hosted-pages/page-language.ts';
import { formatMinor } from '../../money/decimal.ts';

const TEXTS = {
  title: { ru: 'Оплата заказа', en: 'Payment' },
  payTo: { ru: 'Получатель', en: 'Pay to' },
  order: { ru: 'Заказ', en: 'Order' },
  amount: { ru: 'Сумма', en: 'Amount' },
  total: { ru: 'К оплате', en: 'To pay' },
  fee: { ru: 'включая комиссию', en: 'including fee' },
  timeLeft: { ru: 'Время на оплату', en: 'Time left' },
  expiresAt: { ru: 'Оплатить до', en: 'Pay before' },
  chooseMethod: { ru: 'Выберите способ оплаты', en: 'Choose how to pay' },
  changeMethod: { ru: 'Другой способ оплаты', en: 'Another payment method' },
  method_card: { ru: 'Банковская карта', en: 'Bank card' },
  method_sbp: { ru: 'СБП (Система быстрых платежей)', en: 'SBP (Faster Payments System)' },
  method_sberpay: { ru: 'SberPay', en: 'SberPay' },
  cardNumber: { ru: 'Номер карты', en: 'Card number' },
  cardExpiry: { ru: 'Срок действия (ММ/ГГ)', en: 'Expiry (MM/YY)' },
  cardCsc: { ru: 'CVC/CVV', en: 'Security code (CVC)' },
  cardName: { ru: 'Имя владельца (необязательно)', en: 'Name on card (optional)' },
  pay: { ru: 'Оплатить', en: 'Pay' },
  scanQr: { ru: 'Отсканируйте QR-код в приложении банка', en: 'Scan the QR code in your banking app' },
  openBankApp: { ru: 'Открыть приложение банка', en: 'Open the banking app' },
  sandboxPay: { ru: 'Оплатить в тестовом банке', en: 'Pay in the test bank' },
  sandboxNotice: { ru: 'Тестовый режим: деньги не списываются.', en: 'Test mode: no real money moves.' },
  paidTitle: { ru: 'Оплата прошла успешно', en: 'Payment successful' },
  paidText: { ru: 'Спасибо! Магазин получил уведомление об оплате.', en: 'Thank you! The shop has been notified.' },
  failedTitle: { ru: 'Оплата не прошла', en: 'Payment failed' },
  failedText: {
    ru: 'Банк отклонил платёж. Вернитесь в магазин, чтобы создать новый заказ.',
    en: 'The bank refused the payment. Return to the shop to place a new order.',
  },
  expiredTitle: { ru: 'Время на оплату истекло', en: 'This payment has expired' },
  expiredText: {
    ru: 'Вернитесь в магазин, чтобы создать новый заказ.',
    en: 'Return to the shop to place a new order.',
  },
  declinedTitle: { ru: 'Платёж отклонён', en: 'Payment declined' },
  declinedText: {
    ru: 'Попробуйте другую карту или другой способ оплаты.',
    en: 'Try another card or another payment method.',
  },
  confirmTitle: { ru: 'Подтверждение платежа', en: 'Confirm the payment' },
  confirmText: {
    ru: 'Тестовый банк просит подтвердить платёж (как 3-D Secure).',
    en: 'The test bank asks you to confirm this payment (like 3-D Secure).',
  },
  confirm: { ru: 'Подтвердить', en: 'Confirm' },
  cancel: { ru: 'Отменить', en: 'Cancel' },
  notFoundTitle: { ru: 'Платёж не найден', en: 'Payment not found' },
  notFoundText: { ru: 'Проверьте ссылку на оплату.', en: 'Check the payment link.' },
  invalidCard: {
    ru: 'Проверьте номер карты, срок действия и код.',
    en: 'Check the card number, expiry date and code.',
  },
  csrfTitle: { ru: 'Страница устарела', en: 'This page is out of date' },
  csrfText: { ru: 'Обновите страницу оплаты и попробуйте снова.', en: 'Reload the payment page and try again.' },
  unavailableTitle: { ru: 'Способ оплаты недоступен', en: 'Payment method unavailable' },
  unavailableText: { ru: 'Выберите другой способ оплаты.', en: 'Choose another payment method.' },
  badRequestTitle: { ru: 'Запрос не распознан', en: 'The request could not be read' },
  badRequestText: { ru: 'Откройте ссылку на оплату заново.', en: 'Open the payment link again.' },
  tooLargeTitle: { ru: 'Слишком много данных', en: 'Too much data' },
  tooLargeText: {
    ru: 'Форма оплаты прислала больше данных, чем нужно. Обновите страницу и попробуйте снова.',
    en: 'The payment form sent more data than it needs. Reload the page and try again.',
  },
  tooManyTitle: { ru: 'Слишком много попыток', en: 'Too many attempts' },
  tooManyText: { ru: 'Подождите минуту и попробуйте снова.', en: 'Wait a minute and try again.' },
  internalTitle: { ru: 'Что-то пошло не так', en: 'Something went wrong' },
  internalText: {
    ru: 'Это ошибка на нашей стороне. Обновите страницу через минуту.',
    en: 'This is an error on our side. Reload the page in a minute.',
  },
} as const;

export const text = translator(TEXTS);

/** "1 500,50 ₽" / "1,500.50 RUB" from kopecks. */
export function formatMoney(lang: Lang, kopecks: bigint): string {
  const [rubles = '', fraction = ''] = formatMinor(kopecks, 'RUB').split('.');
  const grouped = groupThousands(lang, rubles);
  return lang === 'ru' ? `${grouped},${fraction}\u00a0₽` : `${grouped}.${fraction} RUB`;
}
