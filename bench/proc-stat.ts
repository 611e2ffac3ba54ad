// CPU time and resident memory of one process, read from /proc (Linux).
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc times, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/** utime + stime of `pid` in seconds (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces; fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resident set size of `pid` in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytesOf(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}
