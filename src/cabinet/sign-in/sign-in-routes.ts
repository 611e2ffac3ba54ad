// /cabinet/sign-in and /cabinet/sign-out, the cabinet's front door (/cabinet),
// the language switch and the merchant switch.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CabinetRedirect,
  cabinetOf,
  clearSessionCookie,
  pageFormToken,
  redirectTo,
  safeBack,
  secureCookies,
  sendPage,
  setSessionCookie,
  type CabinetHttpDeps,
} from '../cabinet-http.ts';
import { sessionDeps, type CabinetDeps } from '../cabinet-context.ts';
import { endSession, switchMerchant } from '../sessions/session-service.ts';
import { html } from '../views/html.ts';
import { LANG_COOKIE, isLang, translator } from '../views/cabinet-language.ts';
import { signIn } from './sign-in-service.ts';
import SIGN_IN_TEXTS from './sign-in-texts.json' with { type: 'json' };

const text = translator(SIGN_IN_TEXTS);

type Form = Record<string, string | undefined>;

function origin(request: FastifyRequest) {
  return { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '') };
}

export function signInRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet', { schema: { hide: true }, config: { cabinet: { access: 'signed-in' } } }, async (_r, reply) =>
      redirectTo(reply, '/cabinet/shops'),
    );

    app.get(
      '/cabinet/sign-in',
      { schema: { hide: true }, config: { cabinet: { access: 'public' } } },
      async (request, reply) => {
        const { lang, session } = cabinetOf(request);
        const query = request.query as Form;
        if (session && !session.pending_second_factor) return redirectTo(reply, safeBack(query.back));
        return sendPage(request, reply, http, {
          title: text(lang, 'sign_in'),
          notice: query.signed_out === '1' ? { kind: 'ok', text: text(lang, 'signed_out') } : undefined,
          children: SignInForm({ lang, csrf: pageFormToken(request, reply, deps.config), back: safeBack(query.back) }),
        });
      },
    );

    app.post(
      '/cabinet/sign-in',
      { schema: { hide: true }, config: { cabinet: { access: 'public' } } },
      async (request, reply) => {
        const { lang } = cabinetOf(request);
        const form = (request.body ?? {}) as Form;
        const email = String(form.email ?? '');
        const result = await signIn(deps, { email, password: String(form.password ?? ''), origin: origin(request) });
        if (result.kind === 'refused') {
          const notice = result.retryAt
            ? `${text(lang, 'locked')} ${result.retryAt.toISOString().slice(11, 19)} UTC.`
            : text(lang, 'refused');
          return sendPage(request, reply, http, {
            status: result.retryAt ? 429 : 401,
            title: text(lang, 'sign_in'),
            notice: { kind: 'error', text: notice },
            children: SignInForm({
              lang,
              csrf: pageFormToken(request, reply, deps.config),
              back: safeBack(form.back),
              email,
            }),
          });
        }
        setSessionCookie(reply, deps.config, result.token);
        if (result.kind === 'second-factor')
          return redirectTo(reply, `/cabinet/sign-in/two-factor?back=${encodeURIComponent(safeBack(form.back))}`);
        return redirectTo(reply, safeBack(form.back));
      },
    );

    app.post(
      '/cabinet/sign-out',
      { schema: { hide: true }, config: { cabinet: { access: 'public' } } },
      async (request, reply) => {
        const { session } = cabinetOf(request);
        if (session) await endSession(sessionDeps(deps), session.user_id, session.id);
        clearSessionCookie(reply, deps.config);
        return redirectTo(reply, '/cabinet/sign-in?signed_out=1');
      },
    );

    app.get(
      '/cabinet/language/:lang',
      { schema: { hide: true }, config: { cabinet: { access: 'public' } } },
      async (request, reply) => {
        const { lang } = request.params as { lang: string };
        if (!isLang(lang)) throw new CabinetRedirect('/cabinet');
        reply.setCookie(LANG_COOKIE, lang, {
          path: '/cabinet',
          maxAge: 365 * 24 * 3600,
          sameSite: 'lax',
          httpOnly: true,
          secure: secureCookies(deps.config),
        });
        return redirectTo(reply, safeBack((request.query as Form).back));
      },
    );

    app.post(
      '/cabinet/merchant',
      { schema: { hide: true }, config: { cabinet: { access: 'signed-in' } } },
      async (request, reply) => {
        const { session, merchants } = cabinetOf(request);
        const merchantId = String(((request.body ?? {}) as Form).merchant_id ?? '');
        // Only a merchant the user belongs to; anything else leaves the choice as it was.
        if (session && merchants.some((merchant) => merchant.id === merchantId))
          await switchMerchant(sessionDeps(deps), session.id, merchantId);
        return redirectTo(reply, '/cabinet/shops');
      },
    );
  };
}

function SignInForm(props: { lang: 'ru' | 'en'; csrf: string; back: string; email?: string }) {
  const { lang } = props;
  return html`<section class="card narrow">
    <h1>${text(lang, 'sign_in')}</h1>
    <form method="post" action="/cabinet/sign-in">
      <input type="hidden" name="csrf" value=${props.csrf} />
      <input type="hidden" name="back" value=${props.back} />
      <label for="email">${text(lang, 'email')}</label>
      <input id="email" name="email" type="email" autocomplete="username" required value=${props.email ?? ''} />
      <label for="password">${text(lang, 'password')}</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <button type="submit">${text(lang, 'submit')}</button>
    </form>
    <p><a href="/cabinet/password-reset">${text(lang, 'forgot')}</a></p>
  </section>`;
}
