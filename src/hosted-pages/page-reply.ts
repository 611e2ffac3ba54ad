// How every hosted page is sent: a fresh CSP nonce per response, the security
// headers, and the per-IP request limit whose refusal is the API's 429 (shown
// as a page by the page's error handler).
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { randomBytes } from 'node:crypto';
import { RateLimitedError } from '../errors.ts';

/** What a page may do beyond showing itself: its CSP allows exactly this. */
export interface PagePermissions {
  /** Its forms post back to its own origin. */
  readonly postsForms: boolean;
  /** Its script fetches from its own origin (a status poll). */
  readonly fetchesOwnOrigin: boolean;
}

function contentSecurityPolicy(nonce: string, permissions: PagePermissions): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    'img-src data:',
    ...(permissions.fetchesOwnOrigin ? ["connect-src 'self'"] : []),
    `form-action ${permissions.postsForms ? "'self'" : "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * Sends a page: `render` gets the fresh nonce its style and script carry, the CSP
 * allows that nonce and `permissions`; `cookie` is a Set-Cookie value when the
 * page sets one.
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  permissions: PagePermissions,
  render: (nonce: string) => string,
  cookie?: string,
): FastifyReply {
  const nonce = randomBytes(16).toString('base64url');
  reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', contentSecurityPolicy(nonce, permissions));
  if (cookie) reply.header('set-cookie', cookie);
  return reply.send(render(nonce));
}

/** Limits every route of the page's plugin to `perMinutePerIp` requests a minute from one address. */
export async function limitPageRequests(
  app: FastifyInstance,
  limit: { readonly name: string; readonly perMinutePerIp: number },
): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: limit.perMinutePerIp,
    timeWindow: 60_000,
    keyGenerator: (request) => `${limit.name}:${request.ip}`,
    nameSpace: `paygate-${limit.name}-limit:`,
    errorResponseBuilder: (_request, rateLimitContext) =>
      new RateLimitedError(Math.max(1, Math.ceil(rateLimitContext.ttl / 1000))),
  });
}
