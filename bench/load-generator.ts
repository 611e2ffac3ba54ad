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
  /** Every occurrence of this text in the body is replaced by a fresh UUID per request (a distinct external_id). */
  readonly uniqueBodyToken?: string | undefined;
  /** Extra headers taken in turn per request (e.g. one API key per merchant, rotated), merged over `headers`. */
  readonly rotatingHeaders?: readonly Record<string, string>[] | undefined;
  readonly connections: number;
  readonly durationS: number;
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Connection errors and timeouts plus non-2xx answers. */
  readonly errors: number;
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
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

async function generate(spec: LoadSpec): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let next = 0;
  let nextHeaders = 0;
  const rotating = spec.rotatingHeaders ?? [];
  const result = await autocannon({
    url: spec.origin,
    connections: spec.connections,
    duration: spec.durationS,
    method: spec.method,
    headers: spec.headers,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    requests: [
      {
        setupRequest: (request: AutocannonRequest) => {
          const headers =
            rotating.length > 0
              ? { ...request.headers, ...rotating[nextHeaders++ % rotating.length] }
              : request.headers;
          return {
            ...request,
            path: spec.paths[next++ % spec.paths.length],
            headers: spec.distinctIdempotencyKey ? { ...headers, 'idempotency-key': randomUUID() } : headers,
            ...(spec.uniqueBodyToken && spec.body
              ? { body: spec.body.replaceAll(spec.uniqueBodyToken, randomUUID()) }
              : {}),
          };
        },
      },
    ],
  });
  return {
    // Answers per second over the whole phase (autocannon's average of its per-second samples).
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx,
    completed: result['2xx'],
  };
}

/** Runs one load phase in a child process. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(output) as LoadResult) : reject(new Error(`load generator exited ${code}`)),
    );
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(JSON.stringify(await generate(JSON.parse(process.argv[2]!) as LoadSpec)));
}
