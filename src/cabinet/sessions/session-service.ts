// Server-side cabinet sessions. Signing in makes a new session (a new token: a
// token planted before sign-in is never promoted); a session ends after
// `idleMs` without a request or `absoluteMs` after it began, whichever is first,
// or when the user signs it (or every session) out, or a password reset ends all.
import type { Clock } from '../../clock.ts';
import type { Db, Executor } from '../../db/transaction.ts';
import { newId } from '../../ids.ts';
import type { CabinetTables } from '../cabinet-tables.ts';
import { hashSecretToken, isWellFormedToken, newSecretToken } from '../secret-tokens.ts';
import * as repository from './session-repository.ts';
import type { SessionRow } from './session-repository.ts';

export type { SessionRow };

interface SessionTimeouts {
  readonly idleMs: number;
  readonly absoluteMs: number;
}

export interface SessionDeps {
  readonly db: Db<CabinetTables>;
  readonly clock: Clock;
  readonly timeouts: SessionTimeouts;
}

/** Where a session was opened from, shown in the user's session list. */
export interface SessionOrigin {
  readonly ip: string;
  readonly userAgent: string;
}

export interface StartedSession {
  readonly token: string;
  readonly session: SessionRow;
}

/** last_seen_at is written at most this often: a page's assets and its navigation do not each write a row. */
const TOUCH_EVERY_MS = 60_000;

export async function startSession(
  deps: SessionDeps,
  db: Executor<CabinetTables>,
  input: { userId: string; merchantId: string | null; pendingSecondFactor: boolean; origin: SessionOrigin },
): Promise<StartedSession> {
  const now = deps.clock.now();
  const token = newSecretToken();
  const row = {
    id: newId('cabinetSession'),
    token_hash: hashSecretToken(token),
    user_id: input.userId,
    merchant_id: input.merchantId,
    csrf_token: newSecretToken(),
    pending_second_factor: input.pendingSecondFactor,
    stepped_up_at: input.pendingSecondFactor ? null : now,
    ip: input.origin.ip.slice(0, 100),
    user_agent: input.origin.userAgent.slice(0, 500),
    created_at: now,
    last_seen_at: now,
    expires_at: new Date(now.getTime() + deps.timeouts.absoluteMs),
    ended_at: null,
  };
  await repository.insertSession(db, row);
  return { token, session: row };
}

/** The live session of a cookie's token, touched; undefined when unknown, ended, idle too long or past its end. */
export async function resumeSession(deps: SessionDeps, token: unknown): Promise<SessionRow | undefined> {
  if (!isWellFormedToken(token)) return undefined;
  const session = await repository.findLiveSessionByTokenHash(deps.db, hashSecretToken(token));
  if (!session) return undefined;
  const now = deps.clock.now();
  const idleFor = now.getTime() - session.last_seen_at.getTime();
  if (idleFor > deps.timeouts.idleMs || now >= session.expires_at) {
    await repository.updateSession(deps.db, session.id, { ended_at: now });
    return undefined;
  }
  if (idleFor >= TOUCH_EVERY_MS) {
    await repository.updateSession(deps.db, session.id, { last_seen_at: now });
    return { ...session, last_seen_at: now };
  }
  return session;
}

/**
 * The second factor was given: the session is now whole. Its token is replaced, so a token seen
 * between the two steps is worth nothing after them.
 */
export async function completeSecondFactor(deps: SessionDeps, sessionId: string): Promise<string> {
  const token = newSecretToken();
  const now = deps.clock.now();
  await repository.updateSession(deps.db, sessionId, {
    token_hash: hashSecretToken(token),
    pending_second_factor: false,
    stepped_up_at: now,
    csrf_token: newSecretToken(),
  });
  return token;
}

export async function markSteppedUp(deps: SessionDeps, sessionId: string): Promise<void> {
  await repository.updateSession(deps.db, sessionId, { stepped_up_at: deps.clock.now() });
}

export async function switchMerchant(deps: SessionDeps, sessionId: string, merchantId: string): Promise<void> {
  await repository.updateSession(deps.db, sessionId, { merchant_id: merchantId });
}

export function endSession(deps: SessionDeps, userId: string, sessionId: string): Promise<number> {
  return repository.endSession(deps.db, userId, sessionId, deps.clock.now());
}

/** "Sign out everywhere": every session of the user but `exceptSessionId` (the one asking, when it stays). */
export function endSessionsOf(
  deps: Pick<SessionDeps, 'clock'>,
  db: Executor<CabinetTables>,
  userId: string,
  exceptSessionId?: string,
): Promise<number> {
  return repository.endSessionsOf(db, userId, deps.clock.now(), exceptSessionId);
}

export function liveSessionsOf(deps: SessionDeps, userId: string): Promise<SessionRow[]> {
  return repository.liveSessionsOf(deps.db, userId, deps.clock.now());
}
