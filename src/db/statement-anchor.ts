// Rows written by one statement together with the row they belong to: a module's
// data-modifying CTE inserts each of its rows only when that row's anchor key
// appears in a CTE of the same statement (a payout only with its reservation,
// its event only with the payout). Several resources of one statement each
// stand or fall on their own anchor row.
import { sql, type RawBuilder } from 'kysely';

/** The CTE (and its column) whose values admit the rows of another CTE. */
export interface CteAnchor {
  readonly cte: string;
  readonly column: string;
}

/** `join <cte> on <cte>.<column> = <key>`: keeps the rows whose key the anchor holds (keys are unique in the anchor). */
export function joinAnchor(anchor: CteAnchor, key: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`join ${sql.table(anchor.cte)} on ${sql.ref(`${anchor.cte}.${anchor.column}`)} = ${key}`;
}
