// An action on a person is recorded in every merchant they belong to: each
// merchant's audit log shows what happened to its own people.
import { recordAudit, type AuditActor } from '../../audit/audit-service.ts';
import type { Clock } from '../../clock.ts';
import type { Executor } from '../../db/transaction.ts';
import * as repository from './user-repository.ts';

export async function recordUserAudit(
  tx: Executor,
  clock: Clock,
  event: { actor: AuditActor; action: string; userId: string; details?: Record<string, unknown> },
): Promise<void> {
  for (const membership of await repository.membershipsOf(tx, event.userId))
    await recordAudit(tx, clock, {
      actor: event.actor,
      action: event.action,
      merchantId: membership.merchant_id,
      target: event.userId,
      details: event.details,
    });
}
