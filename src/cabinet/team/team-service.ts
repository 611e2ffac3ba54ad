// A merchant's team: its members and their roles, invitations by a one-time link
// (mailed when the cabinet has a mailer, otherwise shown once to the inviter),
// accepting one, changing a role and removing a member. The rules: only an owner
// invites or promotes to owner, and only an owner changes or removes an owner; the
// last owner is never demoted nor removed — the owners are read under lock, so two
// concurrent demotions cannot both pass. Every change is audited in its transaction.
import { recordAudit, type AuditActor } from '../../audit/audit-service.ts';
import { inTransaction, type Executor } from '../../db/transaction.ts';
import { InvalidRequestError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { merchantNames } from '../../merchants/merchant-service.ts';
import { sessionDeps, type CabinetDeps } from '../cabinet-context.ts';
import type { CabinetTables } from '../cabinet-tables.ts';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../passwords.ts';
import { isRole, roleCan, type Role } from '../roles.ts';
import { hashSecretToken, isWellFormedToken, newSecretToken } from '../secret-tokens.ts';
import { startSession, type SessionOrigin, type StartedSession } from '../sessions/session-service.ts';
import * as users from '../users/user-repository.ts';
import { addMembership, insertNewUser, normalizeEmail } from '../users/user-service.ts';
import * as invites from './invite-repository.ts';
import type { InviteRow } from './invite-repository.ts';
import type { Lang } from '../views/cabinet-language.ts';

/** An invitation link works for 72 hours. */
const INVITE_VALID_MS = 72 * 60 * 60 * 1000;

/** Why a team action was refused; each has a text in team-texts.json. */
const TEAM_REFUSALS = [
  'owner_only',
  'last_owner',
  'not_member',
  'not_manager',
  'already_member',
  'already_invited',
  'bad_role',
  'bad_email',
  'bad_name',
  'bad_password',
  'mail_failed',
  'invite_gone',
  'wrong_email',
  'sign_in_first',
  'account_exists',
] as const;
export type TeamRefusalReason = (typeof TEAM_REFUSALS)[number];

export class TeamRefusal extends Error {
  readonly reason: TeamRefusalReason;
  constructor(reason: TeamRefusalReason) {
    super(`team action refused: ${reason}`);
    this.reason = reason;
  }
}

export function isTeamRefusal(value: unknown): value is TeamRefusalReason {
  return typeof value === 'string' && (TEAM_REFUSALS as readonly string[]).includes(value);
}

/** Who manages the team in a request: the signed-in user, as the audit log records them. */
export interface Manager {
  readonly userId: string;
  readonly actor: AuditActor;
}

type Tx = Executor<CabinetTables>;

/** The manager's role read again in the transaction: a role changed a moment ago counts. */
async function managerRole(tx: Tx, merchantId: string, userId: string): Promise<Role> {
  const membership = await users.findMembership(tx, userId, merchantId);
  if (!membership || !roleCan(membership.role, 'team.manage')) throw new TeamRefusal('not_manager');
  return membership.role;
}

export interface Team {
  readonly members: Awaited<ReturnType<typeof users.membersOf>>;
  readonly invites: InviteRow[];
}

export async function teamOf(deps: CabinetDeps, merchantId: string): Promise<Team> {
  const [members, pending] = await Promise.all([
    users.membersOf(deps.db, merchantId),
    invites.pendingInvitesOf(deps.db, merchantId, deps.clock.now()),
  ]);
  return { members, invites: pending };
}

function inviteLink(deps: CabinetDeps, token: string): string {
  return `${deps.config.publicUrl}/cabinet/invites/${token}`;
}

const MAIL = {
  subject: {
    ru: (merchant: string) => `Приглашение в кабинет Paygate: ${merchant}`,
    en: (merchant: string) => `Invitation to the Paygate cabinet: ${merchant}`,
  },
  text: {
    ru: (merchant: string, role: string, link: string) =>
      `Вас пригласили в команду «${merchant}» в кабинете Paygate (роль: ${role}).\n\n` +
      `Чтобы принять приглашение, откройте ссылку (она действует 72 часа и только один раз):\n${link}\n\n` +
      `Если вы не ждали этого письма, просто не открывайте ссылку.\n`,
    en: (merchant: string, role: string, link: string) =>
      `You are invited to join "${merchant}" in the Paygate cabinet (role: ${role}).\n\n` +
      `To accept, open this link (it works once, within 72 hours):\n${link}\n\n` +
      `If you did not expect this message, simply do not open the link.\n`,
  },
};

export interface InviteInput {
  readonly merchantId: string;
  readonly manager: Manager;
  readonly email: string;
  readonly role: string;
  /** The inviter's language: the mail is written in it. */
  readonly lang: Lang;
  /** The role's name in that language, for the mail. */
  readonly roleLabel: (role: Role) => string;
}

/**
 * A new invitation. With a mailer the link is mailed first and the invitation kept only once the
 * mail went out (a failed send keeps nothing); without one the link is returned to show once.
 */
export async function inviteMember(deps: CabinetDeps, input: InviteInput): Promise<{ link: string; mailed: boolean }> {
  const { merchantId, manager } = input;
  if (!isRole(input.role)) throw new TeamRefusal('bad_role');
  const role = input.role;
  let email: string;
  try {
    email = normalizeEmail(input.email);
  } catch (error) {
    if (error instanceof InvalidRequestError) throw new TeamRefusal('bad_email');
    throw error;
  }
  await checkInvitable(deps.db, merchantId, manager.userId, email, role, deps.clock.now());
  const token = newSecretToken();
  const link = inviteLink(deps, token);
  if (deps.mailer) {
    const merchant = (await merchantNames(deps.db, [merchantId])).get(merchantId) ?? merchantId;
    try {
      await deps.mailer.send({
        to: email,
        subject: MAIL.subject[input.lang](merchant),
        text: MAIL.text[input.lang](merchant, input.roleLabel(role), link),
      });
    } catch (error) {
      deps.logger.warn({ err: error }, 'the team invitation mail was not sent');
      throw new TeamRefusal('mail_failed');
    }
  }
  const now = deps.clock.now();
  await inTransaction(deps.db, async (tx) => {
    await invites.lockInvitesOf(tx, merchantId);
    await checkInvitable(tx, merchantId, manager.userId, email, role, now);
    const id = newId('teamInvite');
    await invites.insertInvite(tx, {
      id,
      token_hash: hashSecretToken(token),
      merchant_id: merchantId,
      email,
      role,
      invited_by: manager.userId,
      created_at: now,
      expires_at: new Date(now.getTime() + INVITE_VALID_MS),
      accepted_at: null,
      revoked_at: null,
    });
    await recordAudit(tx, deps.clock, {
      actor: manager.actor,
      action: 'team.invited',
      merchantId,
      target: id,
      details: { email, role, mailed: deps.mailer !== undefined },
    });
  });
  return { link, mailed: deps.mailer !== undefined };
}

async function checkInvitable(tx: Tx, merchantId: string, managerId: string, email: string, role: Role, now: Date) {
  const inviterRole = await managerRole(tx, merchantId, managerId);
  if (role === 'owner' && inviterRole !== 'owner') throw new TeamRefusal('owner_only');
  const existing = await users.findUserByEmail(tx, email);
  if (existing && (await users.findMembership(tx, existing.id, merchantId))) throw new TeamRefusal('already_member');
  const pending = await invites.pendingInvitesOf(tx, merchantId, now);
  if (pending.some((invite) => invite.email.toLowerCase() === email.toLowerCase()))
    throw new TeamRefusal('already_invited');
}

export async function revokeInvite(
  deps: CabinetDeps,
  input: { merchantId: string; manager: Manager; inviteId: string },
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    await managerRole(tx, input.merchantId, input.manager.userId);
    const [revoked] = await invites.revokeInvite(tx, input.merchantId, input.inviteId, deps.clock.now());
    if (!revoked) throw new TeamRefusal('invite_gone');
    await recordAudit(tx, deps.clock, {
      actor: input.manager.actor,
      action: 'team.invite_revoked',
      merchantId: input.merchantId,
      target: revoked.id,
      details: { email: revoked.email, role: revoked.role },
    });
  });
}

/**
 * The checks a change to another member passes, under the lock on the merchant's owners:
 * an owner is changed only by an owner, and the last owner stays one.
 */
async function lockForChange(tx: Tx, merchantId: string, managerId: string, userId: string, keepsOwner: boolean) {
  const owners = await users.lockedOwnerIds(tx, merchantId);
  const managerIs = await managerRole(tx, merchantId, managerId);
  const target = await users.findMembership(tx, userId, merchantId);
  if (!target) throw new TeamRefusal('not_member');
  if (target.role === 'owner' && managerIs !== 'owner') throw new TeamRefusal('owner_only');
  if (target.role === 'owner' && !keepsOwner && owners.filter((id) => id !== userId).length === 0)
    throw new TeamRefusal('last_owner');
  return { target, managerIs };
}

export async function changeRole(
  deps: CabinetDeps,
  input: { merchantId: string; manager: Manager; userId: string; role: string },
): Promise<void> {
  if (!isRole(input.role)) throw new TeamRefusal('bad_role');
  const role = input.role;
  await inTransaction(deps.db, async (tx) => {
    const { target, managerIs } = await lockForChange(
      tx,
      input.merchantId,
      input.manager.userId,
      input.userId,
      role === 'owner',
    );
    if (role === 'owner' && managerIs !== 'owner') throw new TeamRefusal('owner_only');
    if (target.role === role) return;
    await users.setRole(tx, input.userId, input.merchantId, role);
    await recordAudit(tx, deps.clock, {
      actor: input.manager.actor,
      action: 'team.role_changed',
      merchantId: input.merchantId,
      target: input.userId,
      details: { before: target.role, after: role },
    });
  });
}

/** The member leaves the merchant; their sessions stay, but the access rule no longer finds the membership. */
export async function removeMember(
  deps: CabinetDeps,
  input: { merchantId: string; manager: Manager; userId: string },
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const { target } = await lockForChange(tx, input.merchantId, input.manager.userId, input.userId, false);
    const user = await users.findUser(tx, input.userId);
    await users.deleteMembership(tx, input.userId, input.merchantId);
    await recordAudit(tx, deps.clock, {
      actor: input.manager.actor,
      action: 'team.member_removed',
      merchantId: input.merchantId,
      target: input.userId,
      details: { email: user?.email ?? '', role: target.role },
    });
  });
}

/** A pending invitation as its link's page shows it. */
export interface OpenInvite {
  readonly invite: InviteRow;
  readonly merchantName: string;
  /** A user with the invitation's email exists: they sign in to accept. */
  readonly accountExists: boolean;
}

function pending(invite: InviteRow | undefined, now: Date): invite is InviteRow {
  return !!invite && invite.accepted_at === null && invite.revoked_at === null && invite.expires_at > now;
}

/** The invitation of a link, when it can still be accepted. */
export async function openInvite(deps: CabinetDeps, token: unknown): Promise<OpenInvite | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const invite = await invites.findInviteByTokenHash(deps.db, hashSecretToken(token));
  if (!pending(invite, deps.clock.now())) return undefined;
  const merchantName = (await merchantNames(deps.db, [invite.merchant_id])).get(invite.merchant_id) ?? '';
  const accountExists = (await users.findUserByEmail(deps.db, invite.email)) !== undefined;
  return { invite, merchantName, accountExists };
}

/**
 * The invitation of a link, locked in the accepting transaction; refused unless still pending and
 * its inviter may still grant it: an invitation does not outlive its inviter's removal or demotion.
 */
async function lockPendingInvite(tx: Tx, token: string, now: Date): Promise<InviteRow> {
  const invite = await invites.findInviteByTokenHash(tx, hashSecretToken(token), true);
  if (!pending(invite, now)) throw new TeamRefusal('invite_gone');
  const inviter = await users.findMembership(tx, invite.invited_by, invite.merchant_id);
  const mayGrant =
    inviter !== undefined &&
    roleCan(inviter.role, 'team.manage') &&
    (invite.role !== 'owner' || inviter.role === 'owner');
  if (!mayGrant) throw new TeamRefusal('invite_gone');
  return invite;
}

/** A new person accepts: their user, the membership and a signed-in session, in one transaction. */
export async function acceptAsNewUser(
  deps: CabinetDeps,
  input: { token: string; name: string; password: string; origin: SessionOrigin },
): Promise<StartedSession & { merchantId: string }> {
  if (!isWellFormedToken(input.token)) throw new TeamRefusal('invite_gone');
  const name = input.name.trim();
  if (name.length === 0 || name.length > 200) throw new TeamRefusal('bad_name');
  if (input.password.length < PASSWORD_MIN_LENGTH || input.password.length > PASSWORD_MAX_LENGTH)
    throw new TeamRefusal('bad_password');
  const passwordHash = await hashPassword(input.password);
  return inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const invite = await lockPendingInvite(tx, input.token, now);
    if (await users.findUserByEmail(tx, invite.email)) throw new TeamRefusal('account_exists');
    const user = await insertNewUser(deps, tx, { email: invite.email, name, passwordHash });
    await addMembership(deps, tx, { userId: user.id, merchantId: invite.merchant_id, role: invite.role });
    await invites.markAccepted(tx, invite.id, now);
    await recordAudit(tx, deps.clock, {
      actor: { kind: 'user', id: user.id, label: user.email, ...input.origin },
      action: 'team.invite_accepted',
      merchantId: invite.merchant_id,
      target: invite.id,
      details: { email: user.email, role: invite.role, new_user: true },
    });
    const started = await startSession(sessionDeps(deps), tx, {
      userId: user.id,
      merchantId: invite.merchant_id,
      pendingSecondFactor: false,
      origin: input.origin,
    });
    return { ...started, merchantId: invite.merchant_id };
  });
}

/** A signed-in user whose email is the invitation's accepts: the membership is added. */
export async function acceptAsUser(
  deps: CabinetDeps,
  input: { token: string; userId: string; email: string; actor: AuditActor },
): Promise<{ merchantId: string }> {
  if (!isWellFormedToken(input.token)) throw new TeamRefusal('invite_gone');
  return inTransaction(deps.db, async (tx) => {
    const now = deps.clock.now();
    const invite = await lockPendingInvite(tx, input.token, now);
    if (invite.email.toLowerCase() !== input.email.toLowerCase()) throw new TeamRefusal('wrong_email');
    if (await users.findMembership(tx, input.userId, invite.merchant_id)) throw new TeamRefusal('already_member');
    await addMembership(deps, tx, { userId: input.userId, merchantId: invite.merchant_id, role: invite.role });
    await invites.markAccepted(tx, invite.id, now);
    await recordAudit(tx, deps.clock, {
      actor: input.actor,
      action: 'team.invite_accepted',
      merchantId: invite.merchant_id,
      target: invite.id,
      details: { email: invite.email, role: invite.role, new_user: false },
    });
    return { merchantId: invite.merchant_id };
  });
}
