// What the retention run asks of a table that ages out. The module that owns
// the table says which of its rows are past retention and removes them; the
// retention module archives them first (retention-service.ts).
import type { Db, Tx } from '../db/transaction.ts';

/** The rows of one table within a unit: one archive file. */
interface ArchivePart {
  readonly table: string;
  /** The rows as JSON lines, page by page, in a stable order. */
  readonly lines: () => AsyncIterable<readonly string[]>;
}

/** Rows past retention that are archived, then removed in one transaction. */
export interface RetentionUnit {
  /** The month (YYYY-MM, UTC) the rows were created in. */
  readonly period: string;
  /** Tells this unit's files from other units of the same month (a batch's first id); empty for a whole month. */
  readonly label: string;
  readonly parts: readonly ArchivePart[];
  /**
   * Removes the rows inside `tx`. Throws RetentionRowsChangedError, removing nothing, unless the rows
   * are still exactly those archived (`archivedCounts`: rows written per table).
   */
  remove(tx: Tx, archivedCounts: ReadonlyMap<string, number>): Promise<void>;
}

export interface RetentionSource {
  /** The table (or family of tables) this source ages out, as status shows it. */
  readonly name: string;
  /** How long rows are kept ("12 months"), or undefined: forever. */
  readonly kept: string | undefined;
  /** Work before any unit (monthly partitions: make the coming months'). */
  prepare?(db: Db, now: Date): Promise<void>;
  /** The oldest rows past retention, or undefined when none are. */
  nextUnit(db: Db, now: Date): Promise<RetentionUnit | undefined>;
  /** One line on what the table holds (its partitions, its oldest row). */
  describe(db: Db): Promise<string>;
}

/** The rows to remove are no longer those archived (written, resent, requeued meanwhile). */
export class RetentionRowsChangedError extends Error {
  constructor(table: string, archived: number, found: number) {
    super(`${table}: ${archived} rows archived, ${found} found at removal`);
    this.name = 'RetentionRowsChangedError';
  }
}

/** The month of `at` as YYYY-MM (UTC). */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}
