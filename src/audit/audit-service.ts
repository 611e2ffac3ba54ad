// The audit log's one write: `recordAudit`, called inside the transaction of the
// change it describes, so an action and its audit row commit together or not at all.
// Cabinet actions, API calls with a key and operator CLI commands all record here.
import type { Clock } from '../clock.ts';
import type { Executor } from '../db/transaction.ts';
import { newId } from '../ids.ts';
import type { AuditActorKind, AuditTables } from './audit-tables.ts';

/** Who acted, and from where (a cabinet request's address and browser). */
export interface AuditActor {
  readonly kind: AuditActorKind;
  readonly id?: string | null | undefined;
  readonly label?: string | undefined;
  readonly ip?: string | undefined;
  readonly userAgent?: string | undefined;
}

export const OPERATOR: AuditActor = { kind: 'operator', label: 'operator' };

export interface AuditEventInput {
  readonly actor: AuditActor;
  /** What was done, as `area.verb`: `user.sign_in`, `user.sign_in_failed`, `api_key.created`, `team.role_changed`… */
  readonly action: string;
  readonly merchantId?: string | null | undefined;
  readonly shopId?: string | null | undefined;
  readonly target?: string | null | undefined;
  /** What changed (never a secret). */
  readonly details?: Record<string, unknown> | undefined;
}

export async function recordAudit(db: Executor<AuditTables>, clock: Clock, event: AuditEventInput): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: newId('auditEvent'),
      merchant_id: event.merchantId ?? null,
      shop_id: event.shopId ?? null,
      actor_kind: event.actor.kind,
      actor_id: event.actor.id ?? null,
      actor_label: (event.actor.label ?? '').slice(0, 320),
      action: event.action,
      target: event.target ?? null,
      ip: (event.actor.ip ?? '').slice(0, 100),
      user_agent: (event.actor.userAgent ?? '').slice(0, 500),
      details: JSON.stringify(event.details ?? {}),
      created_at: clock.now(),
    })
    .execute();
}
