// One page of a list API: the status filter, the keyset window a page reads
// after its cursor, the cursor of the next page, and the query of a list
// ordered newest first by (created_at, id). A page reads one row more than it
// shows: that row, when it comes, says a next page exists. Each list filters its
// own table first; a repository stays typed to its own tables.
import { sql, type SelectQueryBuilder } from 'kysely';
import { InvalidRequestError } from '../errors.ts';
import { decodeListCursor, encodeListCursor, type ListPosition } from './list-cursor.ts';

/** What a client asks of a list: at most `limit` rows, after the position `cursor` names. */
export interface ListQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
}

/** What a page reads: at most `limit` rows strictly after `after` in the list's order. */
export interface ListWindow {
  readonly after?: ListPosition | undefined;
  readonly limit: number;
}

/** How a list is ordered: which ids can be its rows, and where a row stands. */
export interface ListOrder<Row> {
  readonly isListId: (id: string) => boolean;
  readonly positionOf: (row: Row) => ListPosition;
  /** The 400's message for a cursor that is not this list's, where a list has always answered with its own. */
  readonly invalidCursorMessage?: string;
}

export interface ListPage<View> {
  readonly data: View[];
  readonly next_cursor: string | null;
}

/** A list ordered by (created_at, id) whose ids pass `isListId`. */
export function createdAtOrder(
  isListId: (id: string) => boolean,
): ListOrder<{ readonly created_at: Date; readonly id: string }> {
  return { isListId, positionOf: (row) => ({ createdAt: row.created_at, id: row.id }) };
}

/** `read` fetches the window after the query's cursor; `show` turns the page's rows into what the client sees. */
export async function readListPage<Row, View>(
  query: ListQuery,
  order: ListOrder<Row>,
  read: (window: ListWindow) => Promise<Row[]>,
  show: (rows: Row[]) => View[] | Promise<View[]>,
): Promise<ListPage<View>> {
  const after = query.cursor ? decodeListCursor(query.cursor, order.isListId, order.invalidCursorMessage) : undefined;
  const rows = await read({ after, limit: query.limit + 1 });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    data: await show(page),
    next_cursor: rows.length > query.limit && last ? encodeListCursor(order.positionOf(last)) : null,
  };
}

/** A list's status filter: absent, or one of the list's statuses (400 invalid_request naming them otherwise). */
export function parseStatusFilter<Status extends string>(
  value: string | undefined,
  statuses: readonly Status[],
): Status | undefined {
  const isStatus = (text: string): text is Status => (statuses as readonly string[]).includes(text);
  if (value === undefined) return undefined;
  if (!isStatus(value)) throw new InvalidRequestError(`status must be one of ${statuses.join(', ')}.`);
  return value;
}

/** The columns a newest-first list orders by. */
interface NewestFirstColumns {
  readonly created_at: Date;
  readonly id: string;
}

export async function newestFirstPage<
  Tables extends Record<Table, NewestFirstColumns>,
  Table extends keyof Tables,
  Row,
>(builder: SelectQueryBuilder<Tables, Table, Row>, page: ListWindow): Promise<Row[]> {
  const createdAt = sql.ref<Date>('created_at');
  const id = sql.ref<string>('id');
  let paged = builder;
  if (page.after) {
    const after = page.after;
    // `created_at <= after` says the same as the OR below in a form an index on (…, created_at desc, id desc)
    // can start from: without it a later page walked the index from the newest row (0.6 s deep in a
    // million payments, docs/performance.md "Cabinet").
    paged = paged
      .where(createdAt, '<=', after.createdAt)
      .where((eb) =>
        eb.or([
          eb(createdAt, '<', after.createdAt),
          eb.and([eb(createdAt, '=', after.createdAt), eb(id, '<', after.id)]),
        ]),
      );
  }
  return paged.orderBy(createdAt, 'desc').orderBy(id, 'desc').limit(page.limit).execute();
}

/**
 * The windows the cabinet's tables filter by beyond a list's own filters: when a
 * row was made and how much it moves. Absent bounds do not filter.
 */
export interface ListRange {
  /** Rows created at or after this instant. */
  readonly createdFrom?: Date | undefined;
  /** Rows created before this instant. */
  readonly createdBefore?: Date | undefined;
  /** Inclusive bounds in the minor units of the list's amount column. */
  readonly amountMin?: bigint | undefined;
  readonly amountMax?: bigint | undefined;
}

/**
 * `builder` narrowed to the rows inside `range`: by its `created_at` column,
 * and by `amountColumn` (a bigint of minor units) when the list has one.
 */
export function withinRange<Tables, Table extends keyof Tables, Row>(
  builder: SelectQueryBuilder<Tables, Table, Row>,
  range: ListRange,
  amountColumn?: string,
): SelectQueryBuilder<Tables, Table, Row> {
  let narrowed = builder;
  const createdAt = sql.ref<Date>('created_at');
  if (range.createdFrom) narrowed = narrowed.where(createdAt, '>=', range.createdFrom);
  if (range.createdBefore) narrowed = narrowed.where(createdAt, '<', range.createdBefore);
  if (amountColumn !== undefined) {
    const amount = sql.ref<bigint>(amountColumn);
    if (range.amountMin !== undefined) narrowed = narrowed.where(amount, '>=', range.amountMin);
    if (range.amountMax !== undefined) narrowed = narrowed.where(amount, '<=', range.amountMax);
  }
  return narrowed;
}
