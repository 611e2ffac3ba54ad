// While a gateway runs on the embedded database, the CLI's commands run inside it:
// PGlite is one process's database, so a second process cannot open the folder
// (db/data-folder-lock.ts). The gateway listens on a Unix socket in its data folder
// (mode 0600, in a folder that is the owner's only); `paygate <command>` connects,
// the gateway runs the same command over its own database handle and sends back
// its output lines, its standard-input requests and its exit code.
//
// The protocol is one JSON object per line. Client: {"words", "args", "hasStdin",
// "stdinIsTTY"}, then {"stdin": base64} chunks and {"stdinEnd": true} once asked.
// Gateway: {"out": line}, {"err": line}, {"stdin": "request"}, {"exit": code}.
import { chmod, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { ConfigError, type Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { exitCodeFor, type CliCommandEntry, type CliIo } from './cli-command.ts';
// Type only: the client side (runThroughGateway) must not load the database code it never uses.
import type { GatewayDatabase } from './database-command.ts';

const SOCKET_FILE = 'admin.sock';

/** Options whose value is a file path: made absolute, as the gateway's working folder is not the caller's. */
const PATH_OPTIONS = ['--file', '--to', '--from'];

interface RunRequest {
  readonly words: readonly string[];
  readonly args: readonly string[];
  readonly hasStdin: boolean;
  readonly stdinIsTTY: boolean;
}

type GatewayMessage = { out: string } | { err: string } | { stdin: 'request' } | { exit: number };
type ClientMessage = RunRequest | { stdin: string } | { stdinEnd: true };

/** A Unix socket's path is at most this many bytes (sun_path, with its terminating zero). */
const SOCKET_PATH_MAX_BYTES = 107;

function adminSocketPath(dataDir: string): string {
  return join(dataDir, SOCKET_FILE);
}

/** Refuses, before anything starts, a data folder whose socket path the system cannot bind. */
export function checkAdminSocketPath(config: Config): void {
  const path = adminSocketPath(config.dataDir);
  if (Buffer.byteLength(path) > SOCKET_PATH_MAX_BYTES) {
    throw new ConfigError(
      'PAYGATE_DATA_DIR',
      `is too long for the admin socket ${path} (at most ${SOCKET_PATH_MAX_BYTES - SOCKET_FILE.length - 1} bytes): choose a shorter folder`,
    );
  }
}

function send(socket: Socket, message: GatewayMessage | ClientMessage): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}

function absolutePaths(args: readonly string[]): string[] {
  return args.map((arg, index) => {
    const [flag, value] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    if (value !== undefined && PATH_OPTIONS.includes(flag) && !isAbsolute(value)) return `${flag}=${resolve(value)}`;
    const previous = args[index - 1];
    if (value === undefined && previous !== undefined && PATH_OPTIONS.includes(previous) && !isAbsolute(arg))
      return resolve(arg);
    return arg;
  });
}

/** Connects to the gateway's socket; undefined when no gateway listens there. */
function connect(path: string): Promise<Socket | undefined> {
  return new Promise((resolvePromise, reject) => {
    const socket = createConnection(path);
    socket.once('connect', () => resolvePromise(socket));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      // No socket file, or one a stopped or killed gateway left behind.
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') resolvePromise(undefined);
      else
        reject(
          new AppError(
            'service_unavailable',
            `cannot reach the running gateway at ${path} (${error.code ?? error.message}): run the command as the gateway's user`,
          ),
        );
    });
  });
}

async function forwardStdin(socket: Socket, io: CliIo, finished: () => boolean): Promise<void> {
  if (io.stdin) {
    for await (const chunk of io.stdin) {
      // The command ended without reading it all (too large, say): stop reading.
      if (finished()) return;
      send(socket, { stdin: Buffer.from(chunk).toString('base64') });
    }
  }
  send(socket, { stdinEnd: true });
}

/**
 * Runs `command` inside the gateway running on the embedded database's folder, and returns
 * its exit code; undefined when the command runs here (a PostgreSQL server, a command that
 * opens no database, or no gateway running).
 */
export async function runThroughGateway(
  command: Pick<CliCommandEntry, 'words' | 'runsLocally'>,
  args: readonly string[],
  io: CliIo,
  config: Config,
): Promise<number | undefined> {
  if (config.databaseUrl || command.runsLocally) return undefined;
  // No gateway can listen on a path that long (checkAdminSocketPath).
  if (Buffer.byteLength(adminSocketPath(config.dataDir)) > SOCKET_PATH_MAX_BYTES) return undefined;
  const socket = await connect(adminSocketPath(config.dataDir));
  if (!socket) return undefined;
  send(socket, {
    words: command.words,
    args: absolutePaths(args),
    hasStdin: io.stdin !== undefined,
    stdinIsTTY: io.stdin?.isTTY === true,
  });
  return new Promise<number>((resolvePromise, reject) => {
    let exitCode: number | undefined;
    // A connection lost half-way is reported when it closes, just after.
    socket.on('error', () => undefined);
    createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
      const message = JSON.parse(line) as GatewayMessage;
      if ('out' in message) io.out(message.out);
      else if ('err' in message) io.err(message.err);
      else if ('stdin' in message)
        forwardStdin(socket, io, () => exitCode !== undefined || socket.destroyed).catch(reject);
      else {
        exitCode = message.exit;
        socket.end();
      }
    });
    socket.on('close', () => {
      if (exitCode !== undefined) return resolvePromise(exitCode);
      io.err(
        'paygate: the gateway closed the connection before the command finished (it is stopping?): check whether the change took effect',
      );
      resolvePromise(1);
    });
  });
}

export interface AdminSocket {
  close(): Promise<void>;
}

/** The command a request names, loaded when asked (commands.ts imports this module's importers). */
async function commandOf(words: readonly string[]): Promise<CliCommandEntry | undefined> {
  const { commands } = await import('./commands.ts');
  return commands.find(
    (command) => command.words.length === words.length && command.words.every((word, index) => words[index] === word),
  );
}

function serveConnection(socket: Socket, gateway: GatewayDatabase, config: Config): void {
  const stdin = new PassThrough();
  let stdinRequested = false;
  let started = false;
  socket.on('error', () => stdin.destroy());
  socket.on('close', () => stdin.end());
  createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
    let message: ClientMessage;
    try {
      message = JSON.parse(line) as ClientMessage;
    } catch {
      socket.destroy();
      return;
    }
    if ('words' in message) {
      if (started) return;
      started = true;
      const io: CliIo = {
        env: process.env,
        stdin: message.hasStdin
          ? {
              isTTY: message.stdinIsTTY,
              [Symbol.asyncIterator]: () => {
                if (!stdinRequested) send(socket, { stdin: 'request' });
                stdinRequested = true;
                return stdin[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
              },
            }
          : undefined,
        out: (text) => send(socket, { out: text }),
        err: (text) => send(socket, { err: text }),
      };
      void runOrReport(message, io, gateway, config).then((code) => {
        send(socket, { exit: code });
        socket.end();
      });
    } else if ('stdin' in message) stdin.write(Buffer.from(message.stdin, 'base64'));
    else if ('stdinEnd' in message) stdin.end();
  });
}

async function runRequested(request: RunRequest, io: CliIo, gateway: GatewayDatabase, config: Config): Promise<number> {
  const entry = await commandOf(request.words);
  if (!entry || entry.runsLocally) {
    io.err(`paygate: the running gateway does not run "${request.words.join(' ')}"`);
    return 2;
  }
  gateway.context.logger.info({ command: request.words.join(' ') }, 'running a CLI command for the admin socket');
  try {
    const command = await entry.load();
    const { runInsideGateway } = await import('./database-command.ts');
    return await runInsideGateway(gateway, () => command.run([...request.args], io, config));
  } catch (error) {
    return exitCodeFor(error, entry, io, config);
  }
}

function runOrReport(request: RunRequest, io: CliIo, gateway: GatewayDatabase, config: Config): Promise<number> {
  return runRequested(request, io, gateway, config).catch((error: unknown) => {
    gateway.context.logger.error({ err: error }, 'a CLI command for the admin socket failed');
    io.err(`paygate: ${(error as Error).message}`);
    return 1;
  });
}

/** Listens for CLI commands on the data folder's socket; the caller holds the folder's lock. */
export async function startAdminSocket(gateway: GatewayDatabase, config: Config): Promise<AdminSocket> {
  const path = adminSocketPath(config.dataDir);
  // Left behind by a gateway that was killed; this process holds the folder now.
  await unlink(path).catch(() => undefined);
  const server: Server = createServer((socket) => serveConnection(socket, gateway, config));
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolvePromise());
  });
  await chmod(path, 0o600);
  return {
    close: () =>
      new Promise<void>((resolvePromise) => {
        // Waits for commands in flight; the listening socket's file goes with the server.
        server.close(() => resolvePromise());
      }),
  };
}
