// Reading the cabinet's downloads back in tests: a CSV (RFC 4180) as rows of
// cells, and an XLSX through the same library that writes it, as rows of cells
// (a string cell as its text, a number cell as a number).
import { Workbook } from '@cj-tech-master/excelts';

/** RFC 4180: CRLF records, quoted fields with doubled quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index++;
    } else field += char;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

export type XlsxCell = string | number | null;

/** The first sheet's rows; an empty cell is null. */
export async function readXlsx(bytes: Uint8Array): Promise<XlsxCell[][]> {
  const book = new Workbook();
  await book.xlsx.load(bytes);
  const sheet = book.worksheets[0];
  if (!sheet) throw new Error('the workbook has no sheet');
  const rows: XlsxCell[][] = [];
  const columnCount = sheet.columnCount;
  sheet.eachRow({ includeEmpty: true }, (row, rowNumber) => {
    const cells: XlsxCell[] = [];
    for (let column = 1; column <= columnCount; column++) {
      const value = row.getCell(column).value;
      if (value !== null && value !== undefined && typeof value !== 'string' && typeof value !== 'number')
        throw new Error(`row ${rowNumber} column ${column} is neither text nor a number: ${JSON.stringify(value)}`);
      cells.push(value ?? null);
    }
    rows[rowNumber - 1] = cells;
  });
  return rows;
}

/**
 * Whether an XLSX cell is the CSV's cell: text the same, but for the quote the CSV puts before a
 * formula-like text (the XLSX keeps the text as it is: a string cell is never a formula); an empty
 * cell the same as an empty field; a number the same amount as the CSV's decimal.
 */
export function sameCell(csv: string, xlsx: XlsxCell): boolean {
  if (xlsx === null) return csv === '';
  if (typeof xlsx === 'number') return /^-?\d+(\.\d+)?$/.test(csv) && Number(csv) === xlsx;
  return csv === xlsx || (csv === `'${xlsx}` && /^[=+\-@\t\r]/.test(xlsx));
}
