// Signing in: the password (argon2id), then — for a user with TOTP — a session that
// can only finish sign-in until the second factor is given (two-factor module).
// The answer to a refused sign-in never says whether the email exists, and takes
// as long either way (a decoy hash is verified for an unknown email).
import { recordAudit } from '../../audit/audit-service.ts';
import { inTransaction } from '../../db/transaction.ts';
import { needsRehash, hashPassword, verifyPassword } from '../passwords.ts';
import * as users from '../users/user-repository.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { sessionDeps } from '../cabinet-context.ts';
import { startSession, type SessionOrigin, type SessionRow } from '../sessions/session-service.ts';
import { accountSubject, addressSubject, attemptSucceeded, beginAttempt } from './sign-in-throttle.ts';

export type SignInResult =
  | { readonly kind: 'signed-in' | 'second-factor'; readonly token: string; readonly session: SessionRow }
  | { readonly kind: 'refused'; readonly retryAt?: Date | undefined };

export async function signIn(
  deps: CabinetDeps,
  input: { email: string; password: string; origin: SessionOrigin },
): Promise<SignInResult> {
  const subjects = [accountSubject(input.email), addressSubject(input.origin.ip)];
  const locked = await beginAttempt(deps.db, deps.clock, subjects);
  if (locked) return { kind: 'refused', retryAt: locked };
  const user = input.email.length <= 320 ? await users.findUserByEmail(deps.db, input.email.trim()) : undefined;
  const passwordHash = user && user.disabled_at === null ? user.password_hash : null;
  const valid = await verifyPassword(passwordHash, input.password.slice(0, 1_000));
  const actor = { kind: 'user' as const, id: user?.id, label: input.email.slice(0, 320), ...input.origin };
  if (!valid || !user) {
    const memberships = user ? await users.membershipsOf(deps.db, user.id) : [];
    await inTransaction(deps.db, async (tx) => {
      // The failure was counted when the attempt began. Recorded in each merchant of a known user; an unknown email has no merchant to show it to.
      for (const membership of memberships)
        await recordAudit(tx, deps.clock, {
          actor,
          action: 'user.sign_in_failed',
          merchantId: membership.merchant_id,
          target: user?.id,
        });
    });
    return { kind: 'refused' };
  }
  const rehashed = passwordHash && needsRehash(passwordHash) ? await hashPassword(input.password) : undefined;
  const memberships = await users.membershipsOf(deps.db, user.id);
  return inTransaction(deps.db, async (tx) => {
    await attemptSucceeded(tx, subjects);
    for (const membership of memberships)
      await recordAudit(tx, deps.clock, {
        actor,
        action: 'user.signed_in',
        merchantId: membership.merchant_id,
        target: user.id,
        details: { second_factor_pending: user.totp_enabled_at !== null },
      });
    if (rehashed) await users.setPasswordHash(tx, user.id, rehashed);
    const pendingSecondFactor = user.totp_enabled_at !== null;
    const started = await startSession(sessionDeps(deps), tx, {
      userId: user.id,
      merchantId: memberships[0]?.merchant_id ?? null,
      pendingSecondFactor,
      origin: input.origin,
    });
    return { kind: pendingSecondFactor ? 'second-factor' : 'signed-in', ...started };
  });
}
