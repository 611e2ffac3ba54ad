// Runs the real `paygate` command: in this process (runCli with a capturing
// CliIo, so a test's result never depends on how long a process takes to
// start), or as bin/paygate.js in a child process where the process itself is
// what is tested (exit codes, signals, serving).
import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/main.ts';
import { TEST_ROOT_KEY } from './keyring.ts';

/** The child's environment: defaults, then the test's own; a value of undefined removes the variable. */
function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  const merged: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'warn',
    PAYGATE_ROOT_KEY: TEST_ROOT_KEY,
    ...env,
  };
  return Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

export const PAYGATE_BIN = fileURLToPath(new URL('../../bin/paygate.js', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `paygate <args>` in this process, with the child's environment and its
 * output captured line by line; `options.stdin` is its whole standard input.
 */
export async function runPaygateInProcess(
  args: string[],
  env: Record<string, string | undefined>,
  options: { readonly stdin?: string } = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: childEnv(env),
    stdin: (async function* () {
      if (options.stdin !== undefined) yield options.stdin;
    })(),
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
  });
  return { code, stdout, stderr };
}

/** `options.stdin`: written to the child's standard input, which is then closed. */
export function runPaygate(
  args: string[],
  env: Record<string, string | undefined>,
  options: { readonly stdin?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PAYGATE_BIN, ...args], {
      env: childEnv(env),
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Starts `paygate serve` and resolves once it prints its listening address.
 * `entry`: another script that serves the same way (a test-only gateway), run with `args`.
 */
export async function startPaygate(
  args: string[],
  env: Record<string, string | undefined>,
  entry: readonly string[] = [PAYGATE_BIN, 'serve'],
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const { child, ready, output } = await spawnUntilReady([...entry, ...args], listeningUrl, { env: childEnv(env) });
  return { child, url: ready, output };
}

/**
 * Starts `paygate serve --role worker ...args` and resolves once it says its workers run (a worker
 * prints no address unless given --port). `onSpawn` gets the child at once, so a start that hangs
 * can still be stopped.
 */
export async function startPaygateWorker(
  args: readonly string[],
  env: Record<string, string | undefined>,
  onSpawn?: (child: ChildProcess) => void,
): Promise<{ child: ChildProcess; output: () => string }> {
  const { child, output } = await spawnUntilReady(
    [PAYGATE_BIN, 'serve', '--role', 'worker', ...args],
    (text) => text.includes('paygate workers running') || undefined,
    { env: childEnv(env), onSpawn },
  );
  return { child, output };
}

/** The address a process printed in its `listening on URL` line, once it has. */
export const listeningUrl = (output: string): string | undefined => /listening on (http:\/\/\S+)/.exec(output)?.[1];

/**
 * Spawns a script (`argv[0]`, with Node) and resolves once `ready` finds what it waits for in the
 * output so far (stdout and stderr together); rejects if the process exits first. `env` defaults to
 * this process's; `onSpawn` gets the child at once, so a start that hangs can still be stopped.
 */
export function spawnUntilReady<T>(
  argv: readonly string[],
  ready: (output: string) => T | undefined,
  options: { env?: Record<string, string>; onSpawn?: ((child: ChildProcess) => void) | undefined } = {},
): Promise<{ child: ChildProcess; ready: T; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    options.onSpawn?.(child);
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = ready(output);
      if (found !== undefined) resolve({ child, ready: found, output: () => output });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) =>
      reject(
        new Error(
          `${[basename(argv[0]!), ...argv.slice(1)].join(' ')} exited with ${code} before it was ready:\n${output}`,
        ),
      ),
    );
  });
}

export function lastJsonLine<T>(stdout: string): T {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}
