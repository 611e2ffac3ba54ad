// The cabinet's language: the `paygate_lang` cookie the switch sets, else
// Accept-Language; Russian is the fallback, as on the hosted pages. Each area of
// the cabinet keeps its texts in a JSON catalog beside its routes, looked up with
// `translator` (a key missing a language does not compile).
import type { FastifyRequest } from 'fastify';
import { LANGS, translator, type Lang } from '../../hosted-pages/page-language.ts';
import LAYOUT_TEXTS from './layout-texts.json' with { type: 'json' };

export { LANGS, translator, type Lang };

export const LANG_COOKIE = 'paygate_lang';

export const layoutText = translator(LAYOUT_TEXTS);

export function isLang(value: unknown): value is Lang {
  return value === 'ru' || value === 'en';
}

function fromAcceptLanguage(header: string | undefined): Lang {
  const ranked = (header ?? '')
    .slice(0, 500)
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((param) => /^q=([\d.]+)$/.exec(param.trim())?.[1]).find(Boolean);
      return { base: (tag ?? '').split('-')[0], weight: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.weight > 0 && isLang(entry.base))
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  return (ranked[0]?.base as Lang | undefined) ?? 'ru';
}

export function cabinetLang(request: FastifyRequest): Lang {
  const remembered = request.cookies?.[LANG_COOKIE];
  return isLang(remembered) ? remembered : fromAcceptLanguage(request.headers['accept-language']);
}
