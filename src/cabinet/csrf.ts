// CSRF protection of every state-changing cabinet request. A signed-in form
// carries the session's synchronizer token; a form before sign-in (sign-in,
// invitation, password reset) carries HMAC(secret) of a random secret held in an
// HttpOnly cookie (signed double-submit). A request the browser marks as
// cross-site (Sec-Fetch-Site) is refused whatever it carries.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionRow } from './sessions/session-repository.ts';

const FORM_SECRET_COOKIE = 'paygate_form';
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function formSecretToken(secret: string): string {
  return createHmac('sha256', secret).update('cabinet-form').digest('base64url');
}

function sameToken(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length > 200) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a form on this page must carry; sets the double-submit cookie for a page before sign-in. */
export function formToken(
  request: FastifyRequest,
  reply: FastifyReply,
  session: SessionRow | undefined,
  secureCookies: boolean,
): string {
  if (session) return session.csrf_token;
  let secret = request.cookies[FORM_SECRET_COOKIE];
  if (!secret || !SECRET_PATTERN.test(secret)) {
    secret = randomBytes(32).toString('base64url');
    reply.setCookie(FORM_SECRET_COOKIE, secret, {
      path: '/cabinet',
      httpOnly: true,
      sameSite: 'lax',
      secure: secureCookies,
    });
    // Seen by this request's own render too.
    request.cookies[FORM_SECRET_COOKIE] = secret;
  }
  return formSecretToken(secret);
}

/** Whether a state-changing request is the cabinet's own form. */
export function csrfValid(request: FastifyRequest, session: SessionRow | undefined): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return false;
  const presented = (request.body as Record<string, unknown> | undefined)?.csrf;
  if (session) return sameToken(session.csrf_token, presented);
  const secret = request.cookies[FORM_SECRET_COOKIE];
  return !!secret && SECRET_PATTERN.test(secret) && sameToken(formSecretToken(secret), presented);
}
