// The audit log (docs/cabinet.md, "The audit log"). Its one write, `recordAudit`, is called
// inside the transaction of the change it describes, so an action and its audit
// row commit together or not at all; cabinet actions, API calls with a key and
// operator CLI commands all record here. Its reads: a merchant's events, newest
// first, filtered and paged (the cabinet's audit page) or streamed (its CSV).
import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../clock.ts';
import { joinAnchor, type CteAnchor } from '../db/statement-anchor.ts';
import { createdAtOrder, readListPage, type ListPage, type ListQuery } from '../db/list-page.ts';
import type { Executor } from '../db/transaction.ts';
import { InvalidRequestError } from '../errors.ts';
import { newId } from '../ids.ts';
import * as repository from './audit-repository.ts';
import type { AuditEventFilter, AuditEventRow } from './audit-repository.ts';
import type { AuditActorKind, AuditTables } from './audit-tables.ts';

export type { AuditActorKind, AuditEventFilter, AuditEventRow };

/** Who acted, and from where (a cabinet request's address and browser). */
export interface AuditActor {
  readonly kind: AuditActorKind;
  readonly id?: string | null | undefined;
  readonly label?: string | undefined;
  readonly ip?: string | undefined;
  readonly userAgent?: string | undefined;
}

export const OPERATOR: AuditActor = { kind: 'operator', label: 'operator' };

/** The operator, known by the name a command was given (`--by`, else `cli:<os user>`). */
export function operatorNamed(name: string): AuditActor {
  return { ...OPERATOR, label: name };
}

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

/**
 * For a module that writes its change in one statement of data-modifying CTEs
 * (the payouts' creating statement): `name as (insert into audit_events …)`
 * writing each event only with the row its `anchorKey` names in `anchor`, so an
 * event commits exactly when its change does.
 */
export function auditEventsInsertFrom(
  clock: Clock,
  events: readonly (AuditEventInput & { readonly anchorKey: string })[],
  anchor: CteAnchor,
  name: string,
): RawBuilder<unknown> {
  const column = <T>(pick: (event: AuditEventInput & { readonly anchorKey: string }) => T) => events.map(pick);
  return sql`${sql.id(name)} as (
      insert into audit_events (id, merchant_id, shop_id, actor_kind, actor_id, actor_label, action, target, ip, user_agent, details, created_at)
      select a.id, a.merchant_id, a.shop_id, a.actor_kind, a.actor_id, a.actor_label, a.action, a.target, a.ip, a.user_agent, a.details::jsonb,
             ${clock.now().toISOString()}::timestamptz
        from unnest(${events.map(() => newId('auditEvent'))}::text[], ${column((e) => e.merchantId ?? null)}::text[],
                    ${column((e) => e.shopId ?? null)}::text[], ${column((e) => e.actor.kind)}::text[], ${column((e) => e.actor.id ?? null)}::text[],
                    ${column((e) => (e.actor.label ?? '').slice(0, 320))}::text[], ${column((e) => e.action)}::text[], ${column((e) => e.target ?? null)}::text[],
                    ${column((e) => (e.actor.ip ?? '').slice(0, 100))}::text[], ${column((e) => (e.actor.userAgent ?? '').slice(0, 500))}::text[],
                    ${column((e) => JSON.stringify(e.details ?? {}))}::text[], ${column((e) => e.anchorKey)}::text[])
               with ordinality as a(id, merchant_id, shop_id, actor_kind, actor_id, actor_label, action, target, ip, user_agent, details, anchor_key, n)
        ${joinAnchor(anchor, sql.ref('a.anchor_key'))}
       order by n
      returning 1
    )`;
}

/** The filters as a person types them (the audit page's GET form); empty means not filtered. */
export interface AuditFilterForm {
  /** `user.signed_in` exactly, or a prefix ending in `.` or `*`: `team.`, `withdrawal.*`. */
  readonly action?: string | undefined;
  /** `operator`, `system`, or one actor's id (user, key) or label (email, operator name). */
  readonly actor?: string | undefined;
  /** Days in UTC, `YYYY-MM-DD`, both inclusive. */
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly shop?: string | undefined;
}

const DAY_MS = 86_400_000;
const ACTION_MAX_LENGTH = 100;
const ACTOR_MAX_LENGTH = 320;
const SHOP_MAX_LENGTH = 100;

/** A UTC day as its first instant; anything else than an existing `YYYY-MM-DD` is refused. */
function parseDay(value: string, field: string): Date {
  const day = new Date(`${value}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== value)
    throw new InvalidRequestError(`${field} must be a day as YYYY-MM-DD.`);
  return day;
}

function filled(value: string | undefined, field: string, max: number): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  if (trimmed.length > max) throw new InvalidRequestError(`${field} must be at most ${max} characters.`);
  return trimmed;
}

function parseAction(value: string | undefined): AuditEventFilter['action'] {
  const action = filled(value, 'action', ACTION_MAX_LENGTH);
  if (action === undefined) return undefined;
  if (action.endsWith('*')) return { prefix: action.slice(0, -1) };
  return action.endsWith('.') ? { prefix: action } : { exact: action };
}

function parseActor(value: string | undefined): AuditEventFilter['actor'] {
  const actor = filled(value, 'actor', ACTOR_MAX_LENGTH);
  if (actor === undefined) return undefined;
  const kind = actor.toLowerCase();
  return kind === 'operator' || kind === 'system' ? { kind } : { idOrLabel: actor };
}

/** The filter of one merchant's events that a form asks for; InvalidRequestError says what is wrong with it. */
export function parseAuditFilter(merchantId: string, form: AuditFilterForm): AuditEventFilter {
  const from = filled(form.from, 'from', 10);
  const to = filled(form.to, 'to', 10);
  const filter: AuditEventFilter = {
    merchantId,
    action: parseAction(form.action),
    actor: parseActor(form.actor),
    from: from === undefined ? undefined : parseDay(from, 'from'),
    // The whole of the last day: before the next one starts.
    before: to === undefined ? undefined : new Date(parseDay(to, 'to').getTime() + DAY_MS),
    shopId: filled(form.shop, 'shop', SHOP_MAX_LENGTH),
  };
  if (filter.from && filter.before && filter.from >= filter.before)
    throw new InvalidRequestError('from must not be after to.');
  return filter;
}

const AUDIT_LIST_ORDER = createdAtOrder((id) => id.startsWith('aud_'));

/** One page of the merchant's events, newest first. */
export function listAuditEvents(
  db: Executor<AuditTables>,
  filter: AuditEventFilter,
  query: ListQuery,
): Promise<ListPage<AuditEventRow>> {
  return readListPage(
    query,
    AUDIT_LIST_ORDER,
    (window) => repository.listAuditEvents(db, { ...filter, ...window }),
    (rows) => rows,
  );
}

/** An export holds at most this many events, the newest that match (a narrower filter reaches older ones). */
const AUDIT_EXPORT_ROWS_MAX = 100_000;
const EXPORT_BATCH_ROWS = 1_000;

/**
 * The merchant's events that match, newest first, read a batch at a time as
 * they are consumed (an export never holds them all in memory), at most `max`.
 */
export async function* auditEventsForExport(
  db: Executor<AuditTables>,
  filter: AuditEventFilter,
  max = AUDIT_EXPORT_ROWS_MAX,
): AsyncGenerator<AuditEventRow> {
  let after: { createdAt: Date; id: string } | undefined;
  let left = max;
  while (left > 0) {
    const limit = Math.min(EXPORT_BATCH_ROWS, left);
    const rows = await repository.listAuditEvents(db, { ...filter, after, limit });
    yield* rows;
    left -= rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < limit) return;
    after = { createdAt: last.created_at, id: last.id };
  }
}
