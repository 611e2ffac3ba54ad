// A server started as its own process, as it runs in production: the gateway
// (`paygate serve`) or an anchor route. It is ready when it prints its address.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface ServerProcess {
  readonly label: string;
  readonly pid: number;
  /** The address it listens on, e.g. http://127.0.0.1:43210. */
  readonly url: string;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
  /** How it ended (`exited (1)`, `exited (SIGKILL)`) if it has, else undefined: a run can fail at once on a dead server. */
  exitReason(): string | undefined;
}

const STARTUP_TIMEOUT_MS = 120_000;

/**
 * Starts `node script ...args` with `env` and resolves once a line of its
 * standard output matches `ready` (its first group is the URL). Output before
 * that is kept for the error message; standard error goes to ours. With
 * BENCH_SERVER_LOG_DIR set, its whole standard output (the pino log) is also
 * written to `<dir>/<label>-<pid>.log`, for reading what a server did in a run.
 */
export function startServerProcess(options: {
  label: string;
  script: string;
  args?: readonly string[];
  env: NodeJS.ProcessEnv;
  ready: RegExp;
}): Promise<ServerProcess> {
  const profileFlags = process.env.BENCH_SERVER_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SERVER_PROFILE_DIR}`]
    : [];
  const child = spawn(process.execPath, [...profileFlags, options.script, ...(options.args ?? [])], {
    env: options.env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const log = serverLog(options.label, child.pid);
  if (log) child.once('exit', () => log.end());
  return new Promise((resolve, reject) => {
    let output = '';
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${options.label}: ${why}\n${output}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS);
    child.on('error', (error) => fail(error.message));
    child.on('exit', (code, signal) => fail(`exited (${signal ?? code}) before it was ready`));
    child.stdout!.on('data', (chunk: Buffer) => {
      log?.write(chunk);
      if (settled) return;
      output += chunk.toString();
      const match = options.ready.exec(output);
      if (!match?.[1]) return;
      settled = true;
      clearTimeout(timer);
      // Keep draining its output so a chatty server never blocks on a full pipe.
      child.stdout!.resume();
      resolve({
        label: options.label,
        pid: child.pid!,
        url: match[1],
        stop: (graceMs) => stopChild(child, graceMs ?? 30_000),
        exitReason: () =>
          child.exitCode === null && child.signalCode === null
            ? undefined
            : `exited (${child.signalCode ?? child.exitCode})`,
      });
    });
  });
}

function serverLog(label: string, pid: number | undefined) {
  const dir = process.env.BENCH_SERVER_LOG_DIR;
  if (!dir || pid === undefined) return undefined;
  mkdirSync(dir, { recursive: true });
  return createWriteStream(join(dir, `${label.replace(/[^\w.-]+/g, '_')}-${pid}.log`));
}

function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
