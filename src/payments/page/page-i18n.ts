// Texts of the payment page in Russian and English (payment-page-texts.json); the
// language is chosen as on every hosted page (hosted-pages/page-language.ts).
import { groupThousands, translator, type Lang } from '../../hosted-pages/page-language.ts';
import { formatMinor } from '../../money/decimal.ts';
import TEXTS from './payment-page-texts.json' with { type: 'json' };

export const text = translator(TEXTS);

/** "1 500,50 ₽" / "1,500.50 RUB" from kopecks. */
export function formatMoney(lang: Lang, kopecks: bigint): string {
  const [rubles = '', fraction = ''] = formatMinor(kopecks, 'RUB').split('.');
  const grouped = groupThousands(lang, rubles);
  return lang === 'ru' ? `${grouped},${fraction}\u00a0₽` : `${grouped}.${fraction} RUB`;
}
