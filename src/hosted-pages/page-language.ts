// The language of a hosted page (the payment page, the crypto invoice page):
// `?lang=` (the switch) or a posted `lang` field, else Accept-Language; Russian
// is the fallback. Each page keeps its texts in a JSON catalog beside it.
import type { FastifyRequest } from 'fastify';
import KIT_TEXTS from './page-texts.json' with { type: 'json' };

export type Lang = 'ru' | 'en';
export const LANGS: readonly Lang[] = ['ru', 'en'];

/** The lookup of a page's texts; a catalog that misses a language for a key does not compile. */
export function translator<Key extends string>(
  catalog: Readonly<Record<Key, Readonly<Record<Lang, string>>>>,
): (lang: Lang, key: Key) => string {
  return (lang, key) => catalog[key][lang];
}

/** The texts of the parts every page shares (the language switch, the countdown). */
export const kitText = translator(KIT_TEXTS);

function pickLang(query: string | undefined, acceptLanguage: string | undefined): Lang {
  if (query === 'ru' || query === 'en') return query;
  const ranked = (acceptLanguage ?? '')
    .slice(0, 500)
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((param) => /^q=([\d.]+)$/.exec(param.trim())?.[1]).find(Boolean);
      return { base: (tag ?? '').split('-')[0], weight: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.weight > 0 && (entry.base === 'ru' || entry.base === 'en'))
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  return (ranked[0]?.base as Lang | undefined) ?? 'ru';
}

/** The language of a request; a posted form's `lang` field wins over the query's. */
export function requestLang(request: FastifyRequest, formLang?: string): Lang {
  const query = request.query as Record<string, string | undefined>;
  return pickLang(formLang ?? query.lang, request.headers['accept-language']);
}

/** "1 500 000" / "1,500,000": the whole part of an amount, grouped by thousands as the language writes it. */
export function groupThousands(lang: Lang, digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, lang === 'ru' ? '\u00a0' : ',');
}
