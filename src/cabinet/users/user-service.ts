// The cabinet's people: users, the merchants they belong to and their role in each.
// A merchant's first owner is made with the merchant (`paygate merchant create
// --password`); operators create, reset and disable users from the CLI; team
// members join by invitation (cabinet/team).
import type { Clock } from '../../clock.ts';
import { inTransaction, isUniqueViolation, type Db, type Executor } from '../../db/transaction.ts';
import { InvalidRequestError, NotFoundError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Keyring } from '../../kms/keyring.ts';
import {
  createMerchant,
  EMAIL_PATTERN,
  type CreatedMerchant,
  type CreateMerchantInput,
} from '../../merchants/merchant-service.ts';
import type { Notifications } from '../../db/notifications.ts';
import { OPERATOR } from '../../audit/audit-service.ts';
import { merchantNames } from '../../merchants/merchant-service.ts';
import type { CabinetTables } from '../cabinet-tables.ts';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../passwords.ts';
import type { Role } from '../roles.ts';
import { endSessionsOf } from '../sessions/session-service.ts';
import { recordUserAudit } from './user-audit.ts';
import * as repository from './user-repository.ts';
import type { MembershipRow, UserRow } from './user-repository.ts';

export type { MembershipRow, UserRow };

export interface UserDeps {
  readonly db: Db<CabinetTables>;
  readonly clock: Clock;
}

export function normalizeEmail(raw: string): string {
  const email = raw.trim();
  if (!EMAIL_PATTERN.test(email) || email.length > 320)
    throw new InvalidRequestError(`"${email}" is not an email address`);
  return email;
}

export function checkPasswordStrength(password: string): void {
  if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH)
    throw new InvalidRequestError(`the password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
}

/** A new user; `password` may be left out for a user who will set one through a reset link. */
export async function insertNewUser(
  deps: Pick<UserDeps, 'clock'>,
  db: Executor<CabinetTables>,
  input: { email: string; name?: string | undefined; passwordHash: string | null },
): Promise<UserRow> {
  const row = {
    id: newId('user'),
    email: normalizeEmail(input.email),
    name: (input.name ?? '').trim().slice(0, 200),
    password_hash: input.passwordHash,
    totp_secret_sealed: null,
    totp_enabled_at: null,
    totp_last_step: null,
    disabled_at: null,
    created_at: deps.clock.now(),
  };
  try {
    await repository.insertUser(db, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw new InvalidRequestError(`a user with email ${row.email} already exists`);
    throw error;
  }
  return row;
}

export async function createUser(
  deps: UserDeps,
  input: { email: string; name?: string | undefined; password?: string | undefined },
): Promise<UserRow> {
  if (input.password !== undefined) checkPasswordStrength(input.password);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  return insertNewUser(deps, deps.db, { ...input, passwordHash });
}

/**
 * A merchant, its first shop and key, and — when a password is given — its owner, a user
 * with the merchant's email, all in one transaction; `alsoInTransaction` runs in it last
 * (`paygate merchant create` records merchant.created there).
 */
export async function createMerchantWithOwner(
  deps: UserDeps & { readonly keyring: Keyring; readonly notifications?: Notifications | undefined },
  input: CreateMerchantInput & { readonly password?: string | undefined },
  alsoInTransaction?: (tx: Executor, merchantId: string) => Promise<void>,
): Promise<CreatedMerchant & { readonly owner_user_id?: string }> {
  const { password } = input;
  if (password === undefined) return createMerchant(deps, input, alsoInTransaction);
  checkPasswordStrength(password);
  const passwordHash = await hashPassword(password);
  if (await repository.findUserByEmail(deps.db, normalizeEmail(input.email)))
    throw new InvalidRequestError(
      `a user with email ${input.email} already exists; create the merchant without --password`,
    );
  let ownerId = '';
  const created = await createMerchant(deps, input, async (tx, merchantId) => {
    const owner = await insertNewUser(deps, tx, { email: input.email, name: input.name, passwordHash });
    ownerId = owner.id;
    await addMembership(deps, tx, { userId: owner.id, merchantId, role: 'owner' });
    await alsoInTransaction?.(tx, merchantId);
  });
  return { ...created, owner_user_id: ownerId };
}

export async function addMembership(
  deps: Pick<UserDeps, 'clock'>,
  db: Executor<CabinetTables>,
  input: { userId: string; merchantId: string; role: Role },
): Promise<void> {
  await repository.insertMembership(db, {
    user_id: input.userId,
    merchant_id: input.merchantId,
    role: input.role,
    created_at: deps.clock.now(),
  });
}

export function findUserByEmail(deps: UserDeps, email: string): Promise<UserRow | undefined> {
  return repository.findUserByEmail(deps.db, email);
}

export function findUser(deps: UserDeps, userId: string): Promise<UserRow | undefined> {
  return repository.findUser(deps.db, userId);
}

export function membershipsOf(deps: UserDeps, userId: string): Promise<MembershipRow[]> {
  return repository.membershipsOf(deps.db, userId);
}

async function requireUserByEmail(db: Executor<CabinetTables>, email: string): Promise<UserRow> {
  const user = await repository.findUserByEmail(db, email);
  if (!user) throw new NotFoundError(`no user with email ${email}`);
  return user;
}

/** A new password set by the operator: every session of the user ends (audited as the operator's). */
export async function setPassword(deps: UserDeps, email: string, password: string): Promise<UserRow> {
  checkPasswordStrength(password);
  const passwordHash = await hashPassword(password);
  return inTransaction(deps.db, async (tx) => {
    const user = await requireUserByEmail(tx, email);
    await repository.setPasswordHash(tx, user.id, passwordHash);
    await endSessionsOf(deps, tx, user.id);
    await recordUserAudit(tx, deps.clock, { actor: OPERATOR, action: 'user.password_reset', userId: user.id });
    return user;
  });
}

/** A disabled user cannot sign in, and their sessions end now; `enable` undoes it (audited as the operator's). */
export async function setUserDisabled(deps: UserDeps, email: string, disabled: boolean): Promise<UserRow> {
  return inTransaction(deps.db, async (tx) => {
    const user = await requireUserByEmail(tx, email);
    await repository.setDisabled(tx, user.id, disabled ? deps.clock.now() : null);
    if (disabled) await endSessionsOf(deps, tx, user.id);
    await recordUserAudit(tx, deps.clock, {
      actor: OPERATOR,
      action: disabled ? 'user.disabled' : 'user.enabled',
      userId: user.id,
    });
    return user;
  });
}

/** `paygate user create`: a user, and with `merchantId` their membership with `role`, audited as the operator's. */
export async function createUserByOperator(
  deps: UserDeps,
  input: { email: string; name?: string | undefined; password?: string | undefined; merchantId?: string; role?: Role },
): Promise<UserRow> {
  if (input.password !== undefined) checkPasswordStrength(input.password);
  if (input.merchantId !== undefined && !(await merchantNames(deps.db, [input.merchantId])).has(input.merchantId))
    throw new NotFoundError(`No merchant ${input.merchantId}`);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  return inTransaction(deps.db, async (tx) => {
    const user = await insertNewUser(deps, tx, { ...input, passwordHash });
    if (input.merchantId !== undefined)
      await addMembership(deps, tx, { userId: user.id, merchantId: input.merchantId, role: input.role ?? 'viewer' });
    await recordUserAudit(tx, deps.clock, {
      actor: OPERATOR,
      action: 'user.created',
      userId: user.id,
      details: input.merchantId === undefined ? {} : { role: input.role ?? 'viewer' },
    });
    return user;
  });
}
