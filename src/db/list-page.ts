// The page a list API reads: rows ordered newest first by (created_at, id),
// strictly after the position a cursor names (db/list-cursor.ts), at most
// `limit` of them. Each list filters its own table first; this is the part
// every such list shares.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { ListPosition } from './list-cursor.ts';

export interface PageQuery {
  readonly limit: number;
  /** Rows strictly older than this (created_at, id) position. */
  readonly after?: ListPosition | undefined;
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
>(builder: SelectQueryBuilder<Tables, Table, Row>, page: PageQuery): Promise<Row[]> {
  const createdAt = sql.ref<Date>('created_at');
  const id = sql.ref<string>('id');
  let paged = builder;
  if (page.after) {
    const after = page.after;
    paged = paged.where((eb) =>
      eb.or([
        eb(createdAt, '<', after.createdAt),
        eb.and([eb(createdAt, '=', after.createdAt), eb(id, '<', after.id)]),
      ]),
    );
  }
  return paged.orderBy(createdAt, 'desc').orderBy(id, 'desc').limit(page.limit).execute();
}
