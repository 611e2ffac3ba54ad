// Anchor and gateway measured in alternating phases of the same run (after one
// warm-up phase each): anchor, gateway, anchor, gateway, … Whatever else loads the
// machine meanwhile falls on both sides alike, so their ratio stays honest.
import { runLoad, type LoadResult, type LoadSpec } from './load-generator.ts';
import { cpuSecondsOf } from './proc-stat.ts';
import { measurePostgresCpu } from './server-cpu.ts';
import { verdict } from './verdict.ts';

/** One side of the comparison: its load and the server process that answers it. */
export interface Side {
  readonly spec: Omit<LoadSpec, 'durationS'>;
  readonly pid: number;
}

export interface AlternatingTargets {
  /** Least acceptable gateway/anchor ratio of mean req/s. */
  readonly ratioAtLeast: number;
  /** Largest acceptable gateway p99 (the worst of its phases), when there is a latency target. */
  readonly p99AtMostMs?: number | undefined;
}

export interface AlternatingOutcome {
  readonly title: string;
  readonly anchor: readonly LoadResult[];
  readonly gateway: readonly LoadResult[];
  readonly anchorMean: number;
  readonly gatewayMean: number;
  /** Mean gateway req/s over mean anchor req/s. */
  readonly ratio: number;
  /** The smallest ratio of a gateway phase to the anchor phase just before it. */
  readonly minRatio: number;
  readonly gatewayP99MaxMs: number;
  readonly gatewayErrors: number;
  readonly anchorErrors: number;
  readonly targets: AlternatingTargets;
  /** Every target met (ratio, p99 when set, zero gateway errors). */
  readonly met: boolean;
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

/** A phase's figures, with the CPU its server process and (on PostgreSQL) the database server spent per request. */
export interface MeasuredPhase {
  readonly result: LoadResult;
  readonly serverCpuMs: number;
  readonly databaseCpuMs: number | undefined;
}

export async function measuredPhase(side: Side, durationS: number, postgres: boolean): Promise<MeasuredPhase> {
  const serverBefore = cpuSecondsOf(side.pid);
  const database = postgres ? measurePostgresCpu() : undefined;
  const result = await runLoad({ ...side.spec, durationS });
  const requests = Math.max(1, result.completed + result.errors);
  const databaseUs = database?.();
  return {
    result,
    serverCpuMs: ((cpuSecondsOf(side.pid) - serverBefore) * 1000) / requests,
    databaseCpuMs: databaseUs === undefined ? undefined : databaseUs / 1000 / requests,
  };
}

function phaseLine(phase: string, side: string, { result, serverCpuMs, databaseCpuMs }: MeasuredPhase): string {
  const database = databaseCpuMs === undefined ? '' : `, PostgreSQL ${databaseCpuMs.toFixed(2)}`;
  return (
    `  ${phase.padEnd(7)} ${side.padEnd(8)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s` +
    `   p50 ${result.p50Ms.toFixed(1).padStart(6)} ms   p99 ${result.p99Ms.toFixed(1).padStart(6)} ms   errors ${String(result.errors).padStart(4)}` +
    `   CPU ms/req: server ${serverCpuMs.toFixed(2)}${database}\n`
  );
}

export async function alternate(options: {
  title: string;
  anchor: Side;
  gateway: Side;
  /** Also measure the PostgreSQL server's CPU per request (local server, Linux). */
  postgres: boolean;
  durationS: number;
  pairs: number;
  warmupS: number;
  targets: AlternatingTargets;
}): Promise<AlternatingOutcome> {
  const { title, pairs, warmupS, durationS, targets, postgres } = options;
  const out = (text: string) => process.stdout.write(text);
  out(
    `\n${title}: ${options.anchor.spec.connections} connections, ${durationS} s phases, ${pairs} pairs after ${warmupS} s warm-up each\n`,
  );
  if (warmupS > 0) {
    out(phaseLine('warm-up', 'anchor', await measuredPhase(options.anchor, warmupS, postgres)));
    out(phaseLine('warm-up', 'gateway', await measuredPhase(options.gateway, warmupS, postgres)));
  }
  const anchor: LoadResult[] = [];
  const gateway: LoadResult[] = [];
  for (let pair = 1; pair <= pairs; pair++) {
    const anchorPhase = await measuredPhase(options.anchor, durationS, postgres);
    out(phaseLine(String(pair), 'anchor', anchorPhase));
    anchor.push(anchorPhase.result);
    const gatewayPhase = await measuredPhase(options.gateway, durationS, postgres);
    out(phaseLine(String(pair), 'gateway', gatewayPhase));
    gateway.push(gatewayPhase.result);
  }
  const anchorMean = mean(anchor.map((result) => result.requestsPerSecond));
  const gatewayMean = mean(gateway.map((result) => result.requestsPerSecond));
  const ratio = gatewayMean / anchorMean;
  const minRatio = Math.min(
    ...gateway.map((result, index) => result.requestsPerSecond / anchor[index]!.requestsPerSecond),
  );
  const gatewayP99MaxMs = Math.max(...gateway.map((result) => result.p99Ms));
  const gatewayErrors = sum(gateway.map((result) => result.errors));
  const anchorErrors = sum(anchor.map((result) => result.errors));
  const ratioMet = ratio >= targets.ratioAtLeast;
  const p99Met = targets.p99AtMostMs === undefined || gatewayP99MaxMs <= targets.p99AtMostMs;
  const errorsMet = gatewayErrors === 0;
  out(
    `  mean: anchor ${anchorMean.toFixed(0)} req/s, gateway ${gatewayMean.toFixed(0)} req/s\n` +
      `  ratio gateway/anchor ${ratio.toFixed(2)} (min ${minRatio.toFixed(2)})   target >= ${targets.ratioAtLeast}   ${verdict(ratioMet)}\n` +
      (targets.p99AtMostMs === undefined
        ? ''
        : `  gateway p99 (worst phase) ${gatewayP99MaxMs.toFixed(1)} ms   target <= ${targets.p99AtMostMs} ms   ${verdict(p99Met)}\n`) +
      `  gateway errors ${gatewayErrors} (anchor ${anchorErrors})   target 0   ${verdict(errorsMet)}\n`,
  );
  return {
    title,
    anchor,
    gateway,
    anchorMean,
    gatewayMean,
    ratio,
    minRatio,
    gatewayP99MaxMs,
    gatewayErrors,
    anchorErrors,
    targets,
    met: ratioMet && p99Met && errorsMet,
  };
}
