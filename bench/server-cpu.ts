// CPU time used by the local PostgreSQL server's processes, read from /proc
// (Linux only; elsewhere the figure is reported as unknown). The benchmarks
// share one machine with the database, so its CPU per operation is half the story.
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc times, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

function postgresTicks(): Map<number, number> | undefined {
  const ticks = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks;
}

/** Starts measuring; the returned function gives the server's CPU microseconds since then (processes that ended meanwhile are missed). */
export function measurePostgresCpu(): () => number | undefined {
  const before = postgresTicks();
  return () => {
    const after = postgresTicks();
    if (!before || !after) return undefined;
    let ticks = 0;
    for (const [pid, value] of after) ticks += value - (before.get(pid) ?? 0);
    return (ticks / TICKS_PER_SECOND) * 1_000_000;
  };
}
