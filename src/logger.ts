// The process logger. Secrets never reach a log line: a request is logged
// without its headers (Authorization) and without its query string, where a
// client may have put an API key (?api_key=sk_live_…).
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

const URL_LOGGED_MAX_LENGTH = 2048;

/** Cabinet paths that carry a one-time token (a password-reset or invitation link). */
const TOKEN_IN_PATH = /^(\/cabinet\/(?:password-reset|invites)\/)[^/?]+/;

/** The URL as logged: the path only, its one-time token hidden; any query is replaced by "?[redacted]". */
export function urlForLog(url: string): string {
  const queryAt = url.indexOf('?');
  const bare = (queryAt < 0 ? url : url.slice(0, queryAt)).replace(TOKEN_IN_PATH, '$1[redacted]');
  const path = queryAt < 0 ? bare : `${bare}?[redacted]`;
  return path.length > URL_LOGGED_MAX_LENGTH ? `${path.slice(0, URL_LOGGED_MAX_LENGTH)}…` : path;
}

interface LoggedRequest {
  readonly method?: string;
  readonly url?: string;
  readonly host?: string;
  readonly ip?: string;
}

function requestForLog(request: LoggedRequest) {
  return { method: request.method, url: urlForLog(request.url ?? ''), host: request.host, remoteAddress: request.ip };
}

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    base: { service: 'paygate' },
    serializers: { req: requestForLog },
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
