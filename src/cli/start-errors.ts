// What went wrong when a command could not start, said in one line that names the
// setting or path to fix, without a stack trace (LOG_LEVEL=debug adds it). The exit
// code says whether the configuration is wrong (2: fix it, a retry will not help) or
// the environment failed (1: the server unreachable right now, anything unexpected).
import type { Config } from '../config.ts';

export interface StartFailure {
  readonly message: string;
  readonly exitCode: 1 | 2;
}

// SQLSTATE: 28000 invalid authorization, 28P01 wrong password, 3D000 no such database, 42501 no privilege.
const CREDENTIAL_SQLSTATES = new Set(['28000', '28P01', '3D000', '42501']);
const FILESYSTEM_CODES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOSPC',
  'EDQUOT',
  'ENOTDIR',
  'EEXIST',
  'EISDIR',
  'ENOENT',
]);

/** The database URL without its password, for messages. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ''}${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparsable)';
  }
}

function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (current instanceof AggregateError && current.errors[0] instanceof Error) return codeOf(current.errors[0]);
  }
  return undefined;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

/** A failure to open the configured database, said in terms of DATABASE_URL or PAYGATE_DATA_DIR. */
export function describeDatabaseFailure(
  error: unknown,
  config: Pick<Config, 'databaseUrl' | 'dataDir'>,
): StartFailure | undefined {
  const code = codeOf(error);
  if (config.databaseUrl) {
    const where = safeUrl(config.databaseUrl);
    if (code && CREDENTIAL_SQLSTATES.has(code)) {
      return {
        exitCode: 2,
        message: `DATABASE_URL (${where}) is refused by the server: ${reason(error)}; check the user, password and database name in DATABASE_URL`,
      };
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return {
        exitCode: 2,
        message: `DATABASE_URL (${where}) names a host that does not resolve (${code}); check the host in DATABASE_URL`,
      };
    }
    if (code && (/^E[A-Z]+$/.test(code) || code.startsWith('08') || code.startsWith('57P'))) {
      return {
        exitCode: 1,
        message: `DATABASE_URL (${where}): the PostgreSQL server cannot be reached (${reason(error)}); start it or correct the host and port in DATABASE_URL`,
      };
    }
    return undefined;
  }
  const path = (error as { path?: unknown }).path;
  const inDataDir = typeof path !== 'string' || path.startsWith(config.dataDir);
  if (code && FILESYSTEM_CODES.has(code) && inDataDir && (error as { syscall?: unknown }).syscall !== 'listen') {
    return {
      exitCode: 2,
      message:
        `PAYGATE_DATA_DIR (${typeof path === 'string' ? path : config.dataDir}) cannot be used: ${reason(error)}; ` +
        'point PAYGATE_DATA_DIR at a folder this user can create and write, on a disk with free space',
    };
  }
  return undefined;
}

/** A file the configuration names (a key file, the data folder) that cannot be read or written. */
export function describeFilesystemFailure(error: unknown): StartFailure | undefined {
  const code = codeOf(error);
  const path = (error as { path?: unknown }).path;
  if (!code || !FILESYSTEM_CODES.has(code) || typeof path !== 'string') return undefined;
  return {
    exitCode: 1,
    message: `${path}: ${reason(error)}; check that the path exists and this user may read and write it`,
  };
}

/** `serve` could not listen: the port is taken or may not be bound by this user. */
export function describeListenFailure(error: unknown, config: Pick<Config, 'port' | 'host'>): StartFailure | undefined {
  const code = codeOf(error);
  const reported = (error as { port?: unknown }).port;
  const port = typeof reported === 'number' ? reported : config.port;
  if (code === 'EADDRINUSE')
    return {
      exitCode: 1,
      message: `PORT ${port} on ${config.host} is in use by another process; stop it or choose another PORT (or --port)`,
    };
  if (code === 'EACCES' && (error as { syscall?: unknown }).syscall === 'listen') {
    return { exitCode: 2, message: `PORT ${port} may not be bound by this user; choose a PORT above 1023` };
  }
  if (code === 'EADDRNOTAVAIL')
    return { exitCode: 2, message: `HOST ${config.host} is not an address of this machine; correct HOST` };
  return undefined;
}
