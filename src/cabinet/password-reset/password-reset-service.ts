// Password reset: a one-time link, valid one hour, sent by mail when the cabinet
// has a mailer (or printed by the operator's `paygate user reset-password`). Only
// the link's SHA-256 is stored. Asking never says whether the email exists. Using
// the link sets the new password, uses the link up and ends every session of the user.
import type { AuditActor } from '../../audit/audit-service.ts';
import { OPERATOR } from '../../audit/audit-service.ts';
import type { Clock } from '../../clock.ts';
import { inTransaction, type Executor } from '../../db/transaction.ts';
import { NotFoundError } from '../../errors.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { hashPassword } from '../passwords.ts';
import { hashSecretToken, isWellFormedToken, newSecretToken } from '../secret-tokens.ts';
import { endSessionsOf } from '../sessions/session-service.ts';
import { accountSubject, clearFailures } from '../sign-in/sign-in-throttle.ts';
import { checkPasswordStrength, findUserByEmail, findUser } from '../users/user-service.ts';
import { recordUserAudit } from '../users/user-audit.ts';
import * as users from '../users/user-repository.ts';
import * as repository from './password-reset-repository.ts';

const RESET_LINK_VALID_MS = 3_600_000;
/** One mailed link per user per this long: asking again and again floods nobody's inbox. */
const ONE_MAIL_PER_MS = 5 * 60_000;

type ResetDeps = Pick<CabinetDeps, 'db' | 'clock' | 'config'>;

function resetLinkOf(publicUrl: string, token: string): string {
  return `${publicUrl}/cabinet/password-reset/${token}`;
}

async function newResetLink(
  deps: { clock: Clock; config: CabinetDeps['config'] },
  tx: Executor,
  input: { userId: string; actor: AuditActor },
): Promise<string> {
  const token = newSecretToken();
  const now = deps.clock.now();
  await repository.insertReset(tx, {
    token_hash: hashSecretToken(token),
    user_id: input.userId,
    created_at: now,
    expires_at: new Date(now.getTime() + RESET_LINK_VALID_MS),
    used_at: null,
  });
  await recordUserAudit(tx, deps.clock, {
    actor: input.actor,
    action: 'user.password_reset_requested',
    userId: input.userId,
  });
  return resetLinkOf(deps.config.publicUrl, token);
}

/**
 * A reset asked for on the sign-in side: a link is mailed when the email is a user's
 * (and not disabled), at most once per user in five minutes; nothing tells the asker
 * which. The mail goes out after the answer (`mailed` settles when it has), so the
 * answer takes as long whether or not the email exists; a mail that fails is logged.
 */
export async function requestPasswordReset(
  deps: CabinetDeps,
  input: { email: string; origin: { ip: string; userAgent: string } },
): Promise<{ mailed: Promise<void> }> {
  const nothing = { mailed: Promise.resolve() };
  const email = input.email.trim().slice(0, 320);
  const user = email === '' ? undefined : await findUserByEmail(deps, email);
  const mailer = deps.mailer;
  if (!user || user.disabled_at !== null || !mailer) return nothing;
  const since = new Date(deps.clock.now().getTime() - ONE_MAIL_PER_MS);
  if (await repository.linkSentSince(deps.db, user.id, since)) return nothing;
  const actor: AuditActor = { kind: 'user', id: user.id, label: user.email, ...input.origin };
  const link = await inTransaction(deps.db, (tx) => newResetLink(deps, tx, { userId: user.id, actor }));
  return { mailed: mailResetLink(deps, mailer, user.email, link) };
}

async function mailResetLink(
  deps: Pick<CabinetDeps, 'logger'>,
  mailer: NonNullable<CabinetDeps['mailer']>,
  to: string,
  link: string,
): Promise<void> {
  try {
    await mailer.send({
      to,
      subject: 'Paygate: reset your password / сброс пароля',
      text: [
        'To set a new password for the Paygate cabinet, open this link within one hour (it works once):',
        'Чтобы задать новый пароль кабинета Paygate, откройте ссылку в течение часа (она работает один раз):',
        '',
        link,
        '',
        'If you did not ask for this, ignore this message. / Если вы не запрашивали сброс, ничего не делайте.',
      ].join('\n'),
    });
  } catch (error) {
    deps.logger.error({ err: error }, 'the password reset mail was not sent');
  }
}

/** A reset link for the operator to pass on (`paygate user reset-password` without --password). */
export async function operatorResetLink(deps: ResetDeps, email: string): Promise<string> {
  return inTransaction(deps.db, async (tx) => {
    const user = await users.findUserByEmail(tx, email.trim());
    if (!user) throw new NotFoundError(`no user with email ${email}`);
    const link = await newResetLink(deps, tx, { userId: user.id, actor: OPERATOR });
    await endSessionsOf(deps, tx, user.id);
    return link;
  });
}

/** The email a usable link resets, or undefined for an unknown, used or expired link. */
export async function resetLinkEmail(deps: ResetDeps, token: unknown): Promise<string | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const reset = await repository.findUsableReset(deps.db, hashSecretToken(token), deps.clock.now());
  return reset && (await findUser(deps, reset.user_id))?.email;
}

/** Sets the new password through a link; false when the link is unknown, used or expired. */
export async function resetPassword(
  deps: ResetDeps,
  input: { token: unknown; password: string; origin: { ip: string; userAgent: string } },
): Promise<boolean> {
  if (!isWellFormedToken(input.token)) return false;
  checkPasswordStrength(input.password);
  const passwordHash = await hashPassword(input.password);
  const tokenHash = hashSecretToken(input.token);
  return inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const reset = await repository.findUsableReset(tx, tokenHash, now, true);
    const user = reset && (await users.findUser(tx, reset.user_id));
    if (!user) return false;
    // Every link of the user is used up, not only this one: an older mail's link must not reset again.
    await repository.markAllUsed(tx, user.id, now);
    await users.setPasswordHash(tx, user.id, passwordHash);
    await endSessionsOf(deps, tx, user.id);
    await clearFailures(tx, accountSubject(user.email));
    await recordUserAudit(tx, deps.clock, {
      actor: { kind: 'user', id: user.id, label: user.email, ...input.origin },
      action: 'user.password_reset',
      userId: user.id,
    });
    return true;
  });
}
