// autocannon in a process of its own, so that the load generator's CPU is
// neither the gateway's nor the anchor's. The parent passes a LoadSpec as JSON
// and reads the summary back as JSON on standard output.
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface LoadSpec {
  /** Origin, e.g. http://127.0.0.1:4000. */
  readonly origin: string;
  readonly method: 'GET' | 'POST';
  /** Every request's path is taken in turn from this list (one entry: always the same path). */
  readonly paths: readonly string[];
  readonly headers: Record<string, string>;
  readonly body?: string | undefined;
  /** A fresh random Idempotency-Key header on every request. */
  readonly distinctIdempotencyKey: boolean;
  /** Bodies taken in turn per request, instead of `body` (e.g. a recipient of its own per payout). */
  readonly rotatingBodies?: readonly string[] | undefined;
  /** Every occurrence of this text in the body is replaced by a fresh UUID per request (a distinct external_id). */
  readonly uniqueBodyToken?: string | undefined;
  /** Extra headers taken in turn per request (e.g. one API key per merchant, rotated), merged over `headers`. */
  readonly rotatingHeaders?: readonly Record<string, string>[] | undefined;
  readonly connections: number;
  readonly durationS: number;
  /** Stop after this many requests instead of after `durationS` (a phase that consumes prepared ids). */
  readonly amount?: number | undefined;
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  /** From every answer's latency (autocannon's own percentiles skip p95). */
  readonly p95Ms: number;
  readonly p99Ms: number;
  /** Connection errors and timeouts plus non-2xx answers. */
  readonly errors: number;
  /** The non-2xx answers by status code: what an operation's errors were. */
  readonly failedStatuses?: Readonly<Record<string, number>>;
  readonly completed: number;
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  duration: number;
  errors: number;
  non2xx: number;
  '2xx': number;
}
type AutocannonRequest = { method?: string; path?: string; headers?: Record<string, string>; body?: string };
type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => {
  on(
    event: 'response',
    listener: (client: unknown, status: number, bytes: number, responseTimeMs: number) => void,
  ): void;
};

/** The `fraction` quantile of `values` (nearest rank). */
export function quantile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

async function generate(spec: LoadSpec): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let next = 0;
  let nextHeaders = 0;
  let nextBody = 0;
  const rotating = spec.rotatingHeaders ?? [];
  const latencies: number[] = [];
  const failedStatuses: Record<string, number> = {};
  const options = {
    url: spec.origin,
    connections: spec.connections,
    duration: spec.durationS,
    ...(spec.amount === undefined ? {} : { amount: spec.amount }),
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    ...(spec.rotatingBodies?.length ? { body: spec.rotatingBodies[0] } : {}),
    requests: [
      {
        setupRequest: (request: AutocannonRequest) => {
          const headers =
            rotating.length > 0
              ? { ...request.headers, ...rotating[nextHeaders++ % rotating.length] }
              : request.headers;
          const bodies = spec.rotatingBodies ?? [];
          const body = bodies.length > 0 ? bodies[nextBody++ % bodies.length] : spec.body;
          return {
            ...request,
            path: spec.paths[next++ % spec.paths.length],
            headers: spec.distinctIdempotencyKey ? { ...headers, 'idempotency-key': randomUUID() } : headers,
            ...(body === undefined
              ? {}
              : { body: spec.uniqueBodyToken ? body.replaceAll(spec.uniqueBodyToken, randomUUID()) : body }),
          };
        },
      },
    ],
  };
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    const instance = autocannon(options, (error, outcome) => (error ? reject(error) : resolve(outcome)));
    instance.on('response', (_client, status, _bytes, responseTimeMs) => {
      latencies.push(responseTimeMs);
      if (status < 200 || status > 299) failedStatuses[status] = (failedStatuses[status] ?? 0) + 1;
    });
  });
  return {
    // Answers per second over the whole phase (autocannon's average of its per-second samples); a phase
    // of `amount` requests may last less than a sample, so there it is the answers over its duration.
    requestsPerSecond:
      spec.amount === undefined ? result.requests.average : result.requests.total / Math.max(0.001, result.duration),
    p50Ms: result.latency.p50,
    p95Ms: quantile(latencies, 0.95),
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx,
    failedStatuses,
    completed: result['2xx'],
  };
}

/** Runs one load phase in a child process (the spec goes over its standard input: bodies can exceed an argument's size). */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(output) as LoadResult) : reject(new Error(`load generator exited ${code}`)),
    );
    child.stdin.end(JSON.stringify(spec));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let input = process.argv[2] ?? '';
  if (!input) for await (const chunk of process.stdin) input += String(chunk);
  process.stdout.write(JSON.stringify(await generate(JSON.parse(input) as LoadSpec)));
}
