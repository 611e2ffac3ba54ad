// What a withdrawal form asks beyond the session: a TOTP code typed in the same
// form (checked as at step-up — counted in the sign-in throttle, a code's step
// accepted once, so a code seen over a shoulder or replayed is refused; recovery
// codes are not taken here), and the owners' mail when an address is added
// (after the commit, never inside a transaction; without SMTP the audit log alone
// tells them).
import type { FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../../errors.ts';
import type { WithdrawalAddressView } from '../../crypto/withdrawals/withdrawal-addresses.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { merchantNames } from '../../merchants/merchant-service.ts';
import { actorOf, cabinetOf } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { checkSecondFactor } from '../two-factor/two-factor-service.ts';
import { looksLikeTotp } from '../two-factor/totp.ts';
import { membersOf } from '../users/user-repository.ts';
import { translator } from '../views/cabinet-language.ts';
import WITHDRAWAL_TEXTS from './withdrawal-texts.json' with { type: 'json' };

const text = translator(WITHDRAWAL_TEXTS);

/** The TOTP code in the form's `code` field, accepted once; a clear 400 otherwise (nothing else happens). */
export async function requireTotpCode(deps: CabinetDeps, request: FastifyRequest, code: unknown): Promise<void> {
  const { lang, user } = cabinetOf(request);
  const typed = typeof code === 'string' ? code.replace(/\s/g, '').slice(0, 20) : '';
  if (!user || !looksLikeTotp(typed)) throw new InvalidRequestError(text(lang, 'code_required'));
  const result = await checkSecondFactor(deps, { user, code: typed, actor: actorOf(request), purpose: 'step_up' });
  if (result.kind === 'accepted') return;
  throw new InvalidRequestError(text(lang, result.retryAt ? 'code_locked' : 'code_wrong'));
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}

/** Mails every active owner of the merchant that an address was added (both languages); failures are logged. */
export async function mailOwnersOfAddition(
  deps: CabinetDeps,
  shop: ShopProfile,
  address: WithdrawalAddressView,
  by: string,
): Promise<void> {
  const mailer = deps.mailer;
  if (!mailer) return;
  const owners = (await membersOf(deps.db, shop.merchantId)).filter(
    (member) => member.role === 'owner' && member.disabled_at === null,
  );
  const merchant = (await merchantNames(deps.db, [shop.merchantId])).get(shop.merchantId) ?? shop.merchantId;
  const values = {
    merchant,
    book: shop.mode,
    label: address.label,
    address: address.address,
    by,
    from: address.usable_from.slice(0, 16).replace('T', ' '),
  };
  for (const owner of owners) {
    try {
      await mailer.send({
        to: owner.email,
        subject: `${text('en', 'mail_subject')} / ${text('ru', 'mail_subject')}`,
        text: `${fill(text('en', 'mail_text'), values)}\n---\n\n${fill(text('ru', 'mail_text'), values)}`,
      });
    } catch (error) {
      deps.logger.error({ err: error, merchantId: shop.merchantId }, 'withdrawal address mail failed');
    }
  }
}
