// The overview's range of UTC days, as the form sends it: `from` and `to` are
// dates (YYYY-MM-DD), both days included; empty means the last 30 days up to
// today (UTC). A range is at most HISTORY_DAYS_MAX days and `from` is not after `to`.
import { HISTORY_DAYS_MAX, utcDay } from '../../ledger/ledger-history.ts';

const DAY_MS = 86_400_000;
const DEFAULT_RANGE_DAYS = 30;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface DayRange {
  /** Midnight UTC of the first day. */
  readonly firstDay: Date;
  /** How many days, the first and the last included. */
  readonly days: number;
  /** The form's values for this range, `YYYY-MM-DD`. */
  readonly from: string;
  readonly to: string;
}

type RangeProblem = 'bad_from' | 'bad_to' | 'from_after_to' | 'too_long';

export type ParsedRange =
  { readonly ok: true; readonly range: DayRange } | { readonly ok: false; readonly problem: RangeProblem };

/** Midnight UTC of a `YYYY-MM-DD` that names a real calendar day between the years 2000 and 9999. */
function dayOf(text: string): Date | undefined {
  const match = DATE.exec(text);
  if (!match) return undefined;
  const at = new Date(`${text}T00:00:00.000Z`);
  if (Number.isNaN(at.getTime()) || utcDay(at) !== text || Number(match[1]) < 2000) return undefined;
  return at;
}

export function parseDayRange(form: { from?: unknown; to?: unknown }, now: Date): ParsedRange {
  const fromText = typeof form.from === 'string' ? form.from.trim() : '';
  const toText = typeof form.to === 'string' ? form.to.trim() : '';
  const to = toText === '' ? dayOf(utcDay(now)) : dayOf(toText);
  if (!to) return { ok: false, problem: 'bad_to' };
  const from = fromText === '' ? new Date(to.getTime() - (DEFAULT_RANGE_DAYS - 1) * DAY_MS) : dayOf(fromText);
  if (!from) return { ok: false, problem: 'bad_from' };
  if (from > to) return { ok: false, problem: 'from_after_to' };
  const days = (to.getTime() - from.getTime()) / DAY_MS + 1;
  if (days > HISTORY_DAYS_MAX) return { ok: false, problem: 'too_long' };
  return { ok: true, range: { firstDay: from, days, from: utcDay(from), to: utcDay(to) } };
}
