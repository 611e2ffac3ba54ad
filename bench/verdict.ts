// How every benchmark reports a target: PASS or MISS beside the figure. A missed
// target is reported, never an exit code; scripts exit non-zero only on errors.
export const verdict = (met: boolean): string => (met ? 'PASS' : 'MISS');

/** Durations and counts from the environment, with a default and a floor of 1. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}
