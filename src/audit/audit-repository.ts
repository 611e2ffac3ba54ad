// The audit log's reads: a merchant's events, newest first, narrowed by the
// filters of the cabinet's audit page. The one write is in audit-service.ts.
import type { Selectable } from 'kysely';
import { newestFirstPage, type ListWindow } from '../db/list-page.ts';
import type { Executor } from '../db/transaction.ts';
import type { AuditActorKind, AuditTables } from './audit-tables.ts';

export type AuditEventRow = Selectable<AuditTables['audit_events']>;

/** Which events of one merchant a list holds. */
export interface AuditEventFilter {
  readonly merchantId: string;
  /** One action exactly (`team.role_changed`), or every action that starts with a prefix (`team.`). */
  readonly action?: { readonly exact: string } | { readonly prefix: string } | undefined;
  /** Every event of one kind of actor (the operator, the system), or of one actor by id or by label (an email). */
  readonly actor?: { readonly kind: AuditActorKind } | { readonly idOrLabel: string } | undefined;
  /** From this instant on (inclusive). */
  readonly from?: Date | undefined;
  /** Before this instant (exclusive). */
  readonly before?: Date | undefined;
  readonly shopId?: string | undefined;
}

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

export async function listAuditEvents(
  db: Executor<AuditTables>,
  filter: AuditEventFilter & ListWindow,
): Promise<AuditEventRow[]> {
  let builder = db.selectFrom('audit_events').selectAll().where('merchant_id', '=', filter.merchantId);
  const { action, actor } = filter;
  if (action && 'exact' in action) builder = builder.where('action', '=', action.exact);
  if (action && 'prefix' in action) builder = builder.where('action', 'like', likePrefix(action.prefix));
  if (actor && 'kind' in actor) builder = builder.where('actor_kind', '=', actor.kind);
  if (actor && 'idOrLabel' in actor) {
    const wanted = actor.idOrLabel;
    builder = builder.where((eb) =>
      eb.or([eb('actor_id', '=', wanted), eb(eb.fn('lower', ['actor_label']), '=', wanted.toLowerCase())]),
    );
  }
  if (filter.from) builder = builder.where('created_at', '>=', filter.from);
  if (filter.before) builder = builder.where('created_at', '<', filter.before);
  if (filter.shopId !== undefined) builder = builder.where('shop_id', '=', filter.shopId);
  return newestFirstPage(builder, filter);
}
