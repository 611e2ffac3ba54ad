// The second factor: enrolment (a TOTP secret sealed at rest by src/kms, confirmed
// by a first code), ten one-time recovery codes (only their SHA-256 kept), the
// check of a code at sign-in and at step-up (counted in the sign-in throttle, so
// codes cannot be guessed at speed), regenerating the codes and switching off.
import { createHash, randomBytes } from 'node:crypto';
import type { AuditActor } from '../../audit/audit-service.ts';
import { inTransaction } from '../../db/transaction.ts';
import { InvalidRequestError } from '../../errors.ts';
import { open, seal } from '../../kms/envelope.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { verifyPassword } from '../passwords.ts';
import { endSessionsOf } from '../sessions/session-service.ts';
import {
  accountSubject,
  secondFactorSubject,
  addressSubject,
  attemptSucceeded,
  beginAttempt,
} from '../sign-in/sign-in-throttle.ts';
import type { UserRow } from '../users/user-service.ts';
import { recordUserAudit } from '../users/user-audit.ts';
import { looksLikeTotp, matchingStep, newTotpSecret } from './totp.ts';
import * as repository from './two-factor-repository.ts';

const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

type TwoFactorDeps = Pick<CabinetDeps, 'db' | 'clock' | 'keyring'>;

function secretContext(userId: string): string {
  return `totp_secret:${userId}`;
}

/** A recovery code as typed: case, spaces and dashes do not matter. */
function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

function hashRecoveryCode(code: string): Uint8Array {
  return createHash('sha256').update(normalizeRecoveryCode(code)).digest();
}

function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((byte) => RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length]!).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/**
 * The secret being enrolled, made and sealed on first sight of the enrolment page and kept
 * (sealed) until confirmed, so reloading the page does not invalidate a scanned QR code.
 */
export async function enrolmentSecret(deps: TwoFactorDeps, user: UserRow): Promise<string> {
  if (user.totp_enabled_at !== null) throw new InvalidRequestError('two-factor sign-in is already on');
  if (user.totp_secret_sealed !== null) return open(deps.keyring, user.totp_secret_sealed, secretContext(user.id));
  const secret = newTotpSecret();
  await repository.setTotp(deps.db, user.id, {
    totp_secret_sealed: seal(deps.keyring, secret, secretContext(user.id)),
    totp_enabled_at: null,
    totp_last_step: null,
  });
  return secret;
}

/**
 * Confirms enrolment with a first code; returns the recovery codes, shown once. Undefined for a
 * wrong code. Every other session of the user ends: from now on each needs the second factor.
 */
export async function enableTwoFactor(
  deps: TwoFactorDeps,
  user: UserRow,
  code: string,
  actor: AuditActor,
  keepSessionId: string,
): Promise<string[] | undefined> {
  if (user.totp_enabled_at !== null) throw new InvalidRequestError('two-factor sign-in is already on');
  if (user.totp_secret_sealed === null) return undefined;
  const secret = open(deps.keyring, user.totp_secret_sealed, secretContext(user.id));
  const step = matchingStep(secret, code.replace(/\s/g, ''), deps.clock.now());
  if (step === undefined) return undefined;
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await inTransaction(deps.db, async (tx) => {
    await repository.setTotp(tx, user.id, {
      totp_secret_sealed: user.totp_secret_sealed,
      totp_enabled_at: deps.clock.now(),
      totp_last_step: String(step),
    });
    await repository.replaceRecoveryCodes(tx, user.id, codes.map(hashRecoveryCode));
    await endSessionsOf(deps, tx, user.id, keepSessionId);
    await recordUserAudit(tx, deps.clock, { actor, action: 'user.two_factor_enabled', userId: user.id });
  });
  return codes;
}

/** Ten new recovery codes (shown once); the old ones stop working. */
export async function regenerateRecoveryCodes(
  deps: TwoFactorDeps,
  user: UserRow,
  actor: AuditActor,
): Promise<string[]> {
  if (user.totp_enabled_at === null) throw new InvalidRequestError('two-factor sign-in is off');
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await inTransaction(deps.db, async (tx) => {
    await repository.replaceRecoveryCodes(tx, user.id, codes.map(hashRecoveryCode));
    await recordUserAudit(tx, deps.clock, { actor, action: 'user.recovery_codes_regenerated', userId: user.id });
  });
  return codes;
}

/** Switches the second factor off: the secret and the recovery codes are forgotten. */
export async function disableTwoFactor(deps: TwoFactorDeps, user: UserRow, actor: AuditActor): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    await repository.setTotp(tx, user.id, { totp_secret_sealed: null, totp_enabled_at: null, totp_last_step: null });
    await repository.replaceRecoveryCodes(tx, user.id, []);
    await recordUserAudit(tx, deps.clock, { actor, action: 'user.two_factor_disabled', userId: user.id });
  });
}

export function recoveryCodesLeft(deps: TwoFactorDeps, userId: string): Promise<number> {
  return repository.unusedRecoveryCodes(deps.db, userId);
}

/** Whether `code` is a TOTP code not yet used or an unused recovery code of the user (used up when it is). */
async function acceptCode(deps: TwoFactorDeps, user: UserRow, raw: string): Promise<'totp' | 'recovery' | undefined> {
  const code = raw.trim().slice(0, 100);
  if (user.totp_enabled_at === null || user.totp_secret_sealed === null || code === '') return undefined;
  if (looksLikeTotp(code.replace(/\s/g, ''))) {
    const secret = open(deps.keyring, user.totp_secret_sealed, secretContext(user.id));
    const step = matchingStep(secret, code.replace(/\s/g, ''), deps.clock.now());
    return step !== undefined && (await repository.advanceLastStep(deps.db, user.id, step)) ? 'totp' : undefined;
  }
  const used = await repository.useRecoveryCode(deps.db, user.id, hashRecoveryCode(code), deps.clock.now());
  return used ? 'recovery' : undefined;
}

export type SecondFactorResult =
  | { readonly kind: 'accepted'; readonly method: 'totp' | 'recovery' | 'password' }
  | { readonly kind: 'refused'; readonly retryAt?: Date | undefined };

/**
 * A code given at the second sign-in step or at step-up. Failures count in the sign-in
 * throttle (per account and per address); while locked, no code is checked.
 */
export async function checkSecondFactor(
  deps: TwoFactorDeps,
  input: { user: UserRow; code: string; actor: AuditActor; purpose: 'sign_in' | 'step_up' },
): Promise<SecondFactorResult> {
  const { user } = input;
  const subjects = [secondFactorSubject(user.id), addressSubject(input.actor.ip ?? '')];
  const locked = await beginAttempt(deps.db, deps.clock, subjects);
  if (locked) return { kind: 'refused', retryAt: locked };
  const method = await acceptCode(deps, user, input.code);
  return inTransaction(deps.db, async (tx) => {
    if (!method) {
      // The failure was counted when the attempt began.
      await recordUserAudit(tx, deps.clock, {
        actor: input.actor,
        action: 'user.second_factor_failed',
        userId: user.id,
        details: { purpose: input.purpose },
      });
      return { kind: 'refused' } as const;
    }
    await attemptSucceeded(tx, subjects);
    if (input.purpose === 'sign_in')
      await recordUserAudit(tx, deps.clock, {
        actor: input.actor,
        action: 'user.signed_in_second_factor',
        userId: user.id,
        details: { method },
      });
    return { kind: 'accepted', method } as const;
  });
}

/** Step-up for a user without a second factor: the password again, throttled like sign-in. */
export async function checkPasswordAgain(
  deps: TwoFactorDeps,
  input: { user: UserRow; password: string; actor: AuditActor },
): Promise<SecondFactorResult> {
  const subjects = [accountSubject(input.user.email), addressSubject(input.actor.ip ?? '')];
  const locked = await beginAttempt(deps.db, deps.clock, subjects);
  if (locked) return { kind: 'refused', retryAt: locked };
  if (await verifyPassword(input.user.password_hash, input.password.slice(0, 1_000))) {
    await attemptSucceeded(deps.db, subjects);
    return { kind: 'accepted', method: 'password' };
  }
  // The failure was counted when the attempt began.
  return { kind: 'refused' };
}
