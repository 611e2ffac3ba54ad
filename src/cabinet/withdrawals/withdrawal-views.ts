// Pieces the withdrawal pages share: paths, times, the status badge, the TOTP field.
import { html, type View } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import type { WithdrawalStatus } from '../../crypto/withdrawals/withdrawal-service.ts';
import WITHDRAWAL_TEXTS from './withdrawal-texts.json' with { type: 'json' };

export const text = translator(WITHDRAWAL_TEXTS);

export function withdrawalsPath(shopId: string): string {
  return `/cabinet/shops/${encodeURIComponent(shopId)}/withdrawals`;
}

export function when(iso: string | Date): string {
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function StatusBadge(props: { lang: Lang; status: WithdrawalStatus }): View {
  return html`<span class=${`badge ${props.status}`}>${text(props.lang, `status_${props.status}`)}</span>`;
}

/** The TOTP code field of a form; `id` keeps labels unique when a page has several forms. */
export function CodeField(props: { lang: Lang; id: string }): View {
  return html`<label for=${props.id}>${text(props.lang, 'code')}</label>
    <input
      id=${props.id}
      name="code"
      type="text"
      inputmode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9 ]{6,7}"
      maxlength="7"
      required
    />`;
}

/** A form field as posted (a repeated or missing field is empty). */
export function formField(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}
