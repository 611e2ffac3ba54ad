// How a request reaches a cabinet page. Every route declares who may open it
// (`config: { cabinet: { access } }`, refused at registration when missing); one
// preHandler resolves the session cookie, the user, the merchant they work in and
// their role, applies the access rule (sign-in, second factor, permission,
// step-up, the money-action 2FA rule, the shop belonging to the merchant) and
// checks the CSRF token of every state-changing request. Pages are sent with a
// strict CSP (no inline script or style) and the frame in views/layout.ts.
import cookie from '@fastify/cookie';
import formBody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditActor } from '../audit/audit-service.ts';
import type { Config } from '../config.ts';
import { classify } from '../http/error-handler.ts';
import { csrfValid, formToken } from './csrf.ts';
import type { CabinetService } from './cabinet-context.ts';
import { ROLES_NEEDING_SECOND_FACTOR, roleCan, type Permission, type Role } from './roles.ts';
import type { SessionRow } from './sessions/session-repository.ts';
import type { UserRow } from './users/user-repository.ts';
import { html, renderDocument, type Children } from './views/html.ts';
import { cabinetLang, layoutText, type Lang } from './views/cabinet-language.ts';
import { Page, type Notice } from './views/layout.ts';
import type { ShopProfile } from '../merchants/merchant-service.ts';

/** Who may open a route. */
export type CabinetAccess =
  /** Anyone: the pages before sign-in, the assets, the language switch. */
  | 'public'
  /** A session between the password and the second factor (the second sign-in step). */
  | 'second-factor'
  /** Any whole session: the user's own account and sessions. */
  | 'signed-in'
  /** A whole session whose role in its merchant holds `permission`. */
  | {
      readonly permission: Permission;
      /** A second permission the role must hold as well (a table's download: exports.create and the table's own). */
      readonly alsoPermission?: Permission;
      /** Key creation, secret reveal and rotation, withdrawals: the second factor asked again if not given lately. */
      readonly stepUp?: boolean;
      /** A money action: owners, admins and finance must have enrolled a second factor first. */
      readonly money?: boolean;
    };

declare module 'fastify' {
  interface FastifyContextConfig {
    cabinet?: { readonly access: CabinetAccess };
  }
  interface FastifyRequest {
    cabinet: CabinetRequest | null;
  }
}

/** What a cabinet handler knows of the request. */
export interface CabinetRequest {
  readonly lang: Lang;
  readonly session: SessionRow | undefined;
  readonly user: UserRow | undefined;
  /** The merchant the user works in and their role there (routes with a permission). */
  readonly merchantId: string | undefined;
  readonly role: Role | undefined;
  /** The shop of a `:shopId` route, checked to be the merchant's. */
  readonly shop: ShopProfile | undefined;
  readonly merchants: ReadonlyArray<{ readonly id: string; readonly name: string; readonly role: Role }>;
}

/** Thrown by the access rule: the browser is sent elsewhere (sign-in, the second factor, step-up). */
export class CabinetRedirect extends Error {
  readonly location: string;
  constructor(location: string) {
    super(`redirect to ${location}`);
    this.location = location;
  }
}

/** Thrown by the access rule: a page that says why, with its status. */
export class CabinetPageError extends Error {
  readonly status: number;
  readonly textKey: 'not_found' | 'forbidden' | 'csrf_failed';
  constructor(status: number, textKey: CabinetPageError['textKey']) {
    super(textKey);
    this.status = status;
    this.textKey = textKey;
  }
}

const FORM_BODY_LIMIT_BYTES = 32 * 1024;

export const SESSION_COOKIE_SECURE = '__Host-paygate_session';
export const SESSION_COOKIE_PLAIN = 'paygate_session';

/** The session cookie is Secure (and `__Host-`) whenever the public URL is https. */
export function secureCookies(config: Pick<Config, 'publicUrl'>): boolean {
  return config.publicUrl.startsWith('https:');
}

export function setSessionCookie(reply: FastifyReply, config: Pick<Config, 'publicUrl'>, token: string): void {
  const secure = secureCookies(config);
  reply.setCookie(secure ? SESSION_COOKIE_SECURE : SESSION_COOKIE_PLAIN, token, {
    path: secure ? '/' : '/cabinet',
    httpOnly: true,
    sameSite: 'lax',
    secure,
  });
}

export function clearSessionCookie(reply: FastifyReply, config: Pick<Config, 'publicUrl'>): void {
  const secure = secureCookies(config);
  reply.clearCookie(secure ? SESSION_COOKIE_SECURE : SESSION_COOKIE_PLAIN, {
    path: secure ? '/' : '/cabinet',
    httpOnly: true,
    sameSite: 'lax',
    secure,
  });
}

function sessionToken(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): string | undefined {
  return request.cookies[secureCookies(config) ? SESSION_COOKIE_SECURE : SESSION_COOKIE_PLAIN];
}

const BACK_BASE = 'http://cabinet.invalid';
const CABINET_PATH = /^\/cabinet(?:[/?#]|$)/;

/**
 * A path inside the cabinet to come back to: never another site (no `//`, no scheme, no
 * backslash), never out of /cabinet by dot segments (`/cabinet/../x`, `%2e%2e`), never a
 * control character (a CR/LF would break the Location header). Returned as a browser resolves it.
 */
export function safeBack(value: unknown, fallback = '/cabinet'): string {
  if (typeof value !== 'string' || value.length > 500) return fallback;
  if (!CABINET_PATH.test(value) || /[\\\u0000-\u001f\u007f]/.test(value)) return fallback;
  const url = new URL(value, BACK_BASE);
  const resolved = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === BACK_BASE && CABINET_PATH.test(resolved) ? resolved : fallback;
}

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export interface CabinetHttpDeps {
  readonly config: Config;
  readonly service: CabinetService;
  /** Every cabinet route as registered, with its access rule (the route × role matrix test reads it). */
  readonly routes: Array<{ readonly method: string; readonly url: string; readonly access: CabinetAccess }>;
}

export async function installCabinetHttp(app: FastifyInstance, deps: CabinetHttpDeps): Promise<void> {
  await app.register(cookie);
  await app.register(formBody, { bodyLimit: FORM_BODY_LIMIT_BYTES });
  app.decorateRequest('cabinet', null);
  app.addHook('onRoute', (route) => {
    const access = route.config?.cabinet?.access;
    if (!access) throw new Error(`${String(route.method)} ${route.url} must declare config.cabinet.access`);
    for (const method of [route.method].flat())
      if (method !== 'HEAD') deps.routes.push({ method, url: route.url, access });
  });
  app.addHook('onSend', async (_request, reply) => {
    reply
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      // The time the server took until the answer (its head, for a download), for browsers' tools and bench:cabinet.
      .header('server-timing', `app;dur=${reply.elapsedTime.toFixed(1)}`);
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });
  app.addHook('preHandler', async (request) => {
    const access = request.routeOptions.config.cabinet?.access;
    if (access === undefined) return;
    request.cabinet = await resolveAccess(request, access, deps);
    if (request.method !== 'GET' && request.method !== 'HEAD' && !csrfValid(request, request.cabinet.session)) {
      throw new CabinetPageError(403, 'csrf_failed');
    }
  });
  // Unknown paths under /cabinet get the cabinet's page, not the API's JSON 404.
  await app.register(
    async (scope) =>
      scope.setNotFoundHandler((request, reply) =>
        sendErrorPage(request, reply, 404, layoutText(cabinetLang(request), 'not_found')),
      ),
    { prefix: '/cabinet' },
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof CabinetRedirect) return reply.code(303).header('location', error.location).send();
    const lang = cabinetLang(request);
    if (error instanceof CabinetPageError)
      return sendErrorPage(request, reply, error.status, layoutText(lang, error.textKey));
    const classified = classify(error);
    if (classified.unexpected) request.log.error({ err: error }, 'cabinet request failed');
    const message =
      classified.status >= 500
        ? layoutText(lang, 'server_error')
        : classified.status === 429
          ? layoutText(lang, 'too_many_requests')
          : classified.body.message;
    for (const [name, value] of Object.entries(classified.headers)) reply.header(name, value);
    return sendErrorPage(request, reply, classified.status, message);
  });
}

function signInRedirect(request: FastifyRequest): CabinetRedirect {
  const back = request.method === 'GET' ? request.url : '/cabinet';
  return new CabinetRedirect(`/cabinet/sign-in?back=${encodeURIComponent(safeBack(back))}`);
}

async function resolveAccess(
  request: FastifyRequest,
  access: CabinetAccess,
  deps: CabinetHttpDeps,
): Promise<CabinetRequest> {
  const lang = cabinetLang(request);
  const session = await deps.service.resumeSession(sessionToken(request, deps.config));
  const user = session && (await deps.service.findUser(session.user_id));
  const signedIn = session && user && user.disabled_at === null ? { session, user } : undefined;
  const anonymous: CabinetRequest = {
    lang,
    session: signedIn?.session,
    user: signedIn?.user,
    merchantId: undefined,
    role: undefined,
    shop: undefined,
    merchants: [],
  };
  if (access === 'public') return anonymous;
  if (!signedIn) throw signInRedirect(request);
  if (access === 'second-factor') {
    if (!signedIn.session.pending_second_factor) throw new CabinetRedirect('/cabinet');
    return anonymous;
  }
  if (signedIn.session.pending_second_factor) throw new CabinetRedirect('/cabinet/sign-in/two-factor');
  const merchants = await deps.service.merchantsOf(signedIn.user.id);
  const current = merchants.find((merchant) => merchant.id === signedIn.session.merchant_id) ?? merchants[0];
  const whole: CabinetRequest = { ...anonymous, merchants, merchantId: current?.id, role: current?.role };
  if (access === 'signed-in') return whole;
  if (
    !current ||
    !roleCan(current.role, access.permission) ||
    (access.alsoPermission && !roleCan(current.role, access.alsoPermission))
  )
    throw new CabinetPageError(403, 'forbidden');
  const shopId = (request.params as Record<string, string | undefined>).shopId;
  let shop: ShopProfile | undefined;
  if (shopId !== undefined) {
    shop = await deps.service.findShop(shopId);
    if (!shop || shop.merchantId !== current.id) throw new CabinetPageError(404, 'not_found');
  }
  if (access.money && ROLES_NEEDING_SECOND_FACTOR.includes(current.role) && signedIn.user.totp_enabled_at === null)
    throw new CabinetRedirect('/cabinet/account/two-factor?required=1');
  if (access.stepUp && !deps.service.steppedUpLately(signedIn.session)) {
    const referer = request.headers.referer ? new URL(request.headers.referer, deps.config.publicUrl) : undefined;
    const back = request.method === 'GET' ? request.url : safeBack(referer && `${referer.pathname}${referer.search}`);
    throw new CabinetRedirect(`/cabinet/step-up?back=${encodeURIComponent(safeBack(back))}`);
  }
  return { ...whole, shop };
}

/** The cabinet context of a request that passed its access rule. */
export function cabinetOf(request: FastifyRequest): CabinetRequest {
  if (!request.cabinet) throw new Error('cabinet route without its access rule');
  return request.cabinet;
}

/** The signed-in user as the audit log records them, with the request's address and browser. */
export function actorOf(request: FastifyRequest): AuditActor {
  const user = request.cabinet?.user;
  return {
    kind: 'user',
    id: user?.id ?? null,
    label: user?.email ?? '',
    ip: request.ip,
    userAgent: String(request.headers['user-agent'] ?? ''),
  };
}

/** The merchant a permission route works in (resolveAccess made sure there is one). */
export function merchantOf(request: FastifyRequest): { merchantId: string; role: Role } {
  const { merchantId, role } = cabinetOf(request);
  if (!merchantId || !role) throw new Error('a permission route without a merchant');
  return { merchantId, role };
}

/** The shop of a `:shopId` route (resolveAccess made sure it is the merchant's). */
export function shopOf(request: FastifyRequest): ShopProfile {
  const { shop } = cabinetOf(request);
  if (!shop) throw new Error('a shop route without :shopId');
  return shop;
}

export interface PageContent {
  readonly title: string;
  readonly children: Children;
  readonly notice?: Notice | undefined;
  readonly status?: number;
}

/** Renders a page in the cabinet's frame; the signed-in parts come from the request. */
export function sendPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: CabinetHttpDeps,
  content: PageContent,
): FastifyReply {
  const cabinet = request.cabinet;
  const lang = cabinet?.lang ?? cabinetLang(request);
  const whole = cabinet?.session && !cabinet.session.pending_second_factor && cabinet.user;
  const document = renderDocument(
    Page({
      lang,
      title: content.title,
      path: request.url,
      notice: content.notice,
      children: content.children,
      signedIn:
        whole && cabinet.user
          ? {
              email: cabinet.user.email,
              csrfToken: cabinet.session!.csrf_token,
              merchantId: cabinet.merchantId ?? null,
              merchants: cabinet.merchants,
              sections: deps.service.sectionsFor(lang, cabinet.role),
            }
          : undefined,
    }),
  );
  return reply
    .code(content.status ?? 200)
    .header('content-type', 'text/html; charset=utf-8')
    .send(document);
}

/** The CSRF token for this page's forms (before sign-in: the double-submit cookie is set here). */
export function pageFormToken(request: FastifyRequest, reply: FastifyReply, config: Pick<Config, 'publicUrl'>): string {
  return formToken(request, reply, request.cabinet?.session, secureCookies(config));
}

/** Post/redirect/get: back to `location` with a notice key the page shows once. */
export function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).send();
}

function sendErrorPage(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  const lang = cabinetLang(request);
  const document = renderDocument(
    Page({
      lang,
      title: layoutText(lang, 'error_title'),
      path: request.url,
      children: html`<p><a href="/cabinet">${layoutText(lang, 'back_to_cabinet')}</a></p>`,
      notice: { kind: 'error', text: message },
    }),
  );
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').send(document);
}
