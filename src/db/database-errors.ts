// Which failures mean "the database cannot be reached right now" (a restart, a
// failover, a network cut, a closed handle, a wait past our bounds, a full disk or a
// read-only database) rather than a bug. The HTTP layer
// answers them 503 service_unavailable with Retry-After; this is the one list.
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

// SQLSTATE: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
// 53300 too_many_connections; class 08 is every connection exception.
// 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout) and 25P03
// idle_in_transaction_session_timeout: a bound of ours ran out because another session held
// on too long (src/db/database.ts SessionTimeouts); a retry shortly after is the answer too.
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '55P03', '57014', '25P03']);

// pg and the pool say these without a code; Kysely and PGlite after their handle was closed.
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'driver has already been destroyed',
  'PGlite is closed',
];

// The database cannot write: its disk is full (53100 disk_full; 53000 insufficient_resources
// is the class) or it is read-only (25006 read_only_sql_transaction: a standby, or
// default_transaction_read_only), or the embedded database's data folder refuses writes.
const STORAGE_SQLSTATES = new Set(['53100', '25006']);
const STORAGE_NODE_CODES = new Set(['ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EDQUOT']);

const CAUSE_DEPTH_MAX = 5;

export const DATABASE_RETRY_AFTER_SECONDS = 5;

function cannotWriteItself(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (STORAGE_SQLSTATES.has(code) || STORAGE_NODE_CODES.has(code))) return true;
  // PGlite's file system passes the errno on in the server's message ("No space left on device").
  return /No space left on device|Read-only file system|Permission denied|Disk quota exceeded/.test(error.message);
}

function isUnavailableItself(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (cannotWriteItself(error)) return true;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (NETWORK_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
  )
    return true;
  if (UNAVAILABLE_MESSAGES.some((message) => error.message.startsWith(message))) return true;
  // A failed connect to a host with several addresses (IPv4 and IPv6) is an AggregateError of them.
  return error instanceof AggregateError && error.errors.some((inner) => isUnavailableItself(inner));
}

/** True when `error` or one of its causes (up to CAUSE_DEPTH_MAX deep) passes `test`. */
function anyCause(error: unknown, test: (candidate: unknown) => boolean): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && current !== undefined && current !== null; depth++) {
    if (test(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** True when the error, or one of its causes, says the database is unreachable. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return anyCause(error, isUnavailableItself);
}

/** True when the error, or one of its causes, says the database cannot write (full disk, read-only). */
export function isDatabaseUnwritable(error: unknown): boolean {
  return anyCause(error, cannotWriteItself);
}

/**
 * True when the server refused the statement itself (it answered with a SQLSTATE
 * outside the connection classes), so an autocommit statement certainly wrote
 * nothing. A dropped connection, a shutdown or a client-side failure leave the
 * outcome unknown: the statement may have committed.
 */
export function statementCertainlyRolledBack(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P');
}
