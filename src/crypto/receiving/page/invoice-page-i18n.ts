// Texts of the hosted crypto invoice page in Russian and English
// (invoice-page-texts.json); the language is chosen as on every hosted page
// (hosted-pages/page-language.ts).
import { groupThousands, translator, type Lang } from '../../../hosted-pages/page-language.ts';
import TEXTS from './invoice-page-texts.json' with { type: 'json' };

export type InvoicePageTextKey = keyof typeof TEXTS;

export const invoiceText = translator(TEXTS);

/** "1 500,5 USDT" / "1,500.5 USDT" from the API's decimal string. */
export function formatUsdt(lang: Lang, decimal: string): string {
  const [whole = '0', fraction] = decimal.split('.');
  const separator = lang === 'ru' ? ',' : '.';
  return `${groupThousands(lang, whole)}${fraction ? `${separator}${fraction}` : ''}\u00a0USDT`;
}
