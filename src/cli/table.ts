// The text form of every listing command: a header and one line per row, columns
// aligned with spaces (no borders, so grep and awk read it as well as a person).
// Amounts are right-aligned. The JSON form (--json) is the stable one for programs.

export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /** Amounts: right-aligned, so their decimal points line up. */
  readonly align?: 'right';
}

const GAP = '  ';

export function table<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string[] {
  const cells = rows.map((row) => columns.map((column) => column.value(row)));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((line) => line[index]!.length)),
  );
  const render = (line: readonly string[]) =>
    line
      .map((cell, index) =>
        columns[index]!.align === 'right' ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!),
      )
      .join(GAP)
      .trimEnd();
  return [render(columns.map((column) => column.header)), ...cells.map(render)];
}

/** A listing's text: the table, or `empty` when there are no rows. */
export function printTable<Row>(
  out: (line: string) => void,
  rows: readonly Row[],
  columns: readonly Column<Row>[],
  empty: string,
): void {
  if (rows.length === 0) out(empty);
  else for (const line of table(rows, columns)) out(line);
}
