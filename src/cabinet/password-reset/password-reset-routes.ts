// /cabinet/password-reset: ask for a link by email (answered the same whether or not
// the email exists), and /cabinet/password-reset/:token: set a new password once.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cabinetOf, pageFormToken, redirectTo, sendPage, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../passwords.ts';
import { html, type View } from '../views/html.ts';
import type { Notice } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import { requestPasswordReset, resetLinkEmail, resetPassword } from './password-reset-service.ts';
import RESET_TEXTS from './password-reset-texts.json' with { type: 'json' };

const text = translator(RESET_TEXTS);
const PUBLIC = { schema: { hide: true }, config: { cabinet: { access: 'public' as const } } };

type Form = Record<string, string | undefined>;

function origin(request: FastifyRequest) {
  return { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '') };
}

export function passwordResetRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  function sendAskPage(request: FastifyRequest, reply: FastifyReply, notice?: Notice) {
    const { lang } = cabinetOf(request);
    const canMail = deps.mailer !== undefined;
    return sendPage(request, reply, http, {
      title: text(lang, 'title'),
      notice: notice ?? (canMail ? undefined : { kind: 'info', text: text(lang, 'no_mailer') }),
      children: html`<section class="card narrow">
        <h1>${text(lang, 'title')}</h1>
        ${
          canMail
            ? html`<p>${text(lang, 'intro')}</p>
                <form method="post" action="/cabinet/password-reset">
                  <input type="hidden" name="csrf" value=${pageFormToken(request, reply, deps.config)} />
                  <label for="email">${text(lang, 'email')}</label>
                  <input id="email" name="email" type="email" autocomplete="username" required />
                  <button type="submit">${text(lang, 'send')}</button>
                </form>`
            : null
        }
        <p><a href="/cabinet/sign-in">${text(lang, 'sign_in')}</a></p>
      </section>`,
    });
  }

  function sendInvalidLink(request: FastifyRequest, reply: FastifyReply) {
    const { lang } = cabinetOf(request);
    return sendPage(request, reply, http, {
      title: text(lang, 'title'),
      status: 404,
      notice: { kind: 'error', text: text(lang, 'invalid_link') },
      children: html`<p><a href="/cabinet/password-reset">${text(lang, 'title')}</a></p>`,
    });
  }

  return async (app: FastifyInstance) => {
    app.get('/cabinet/password-reset', PUBLIC, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const query = request.query as Form;
      if (query.done === '1') return sendAskPage(request, reply, { kind: 'ok', text: text(lang, 'done') });
      if (query.sent === '1') return sendAskPage(request, reply, { kind: 'ok', text: text(lang, 'sent') });
      return sendAskPage(request, reply);
    });

    app.post('/cabinet/password-reset', PUBLIC, async (request, reply) => {
      if (!deps.mailer) return sendAskPage(request, reply);
      const email = String(((request.body ?? {}) as Form).email ?? '');
      await requestPasswordReset(deps, { email, origin: origin(request) });
      return redirectTo(reply, '/cabinet/password-reset?sent=1');
    });

    app.get('/cabinet/password-reset/:token', PUBLIC, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const { token } = request.params as { token: string };
      const email = await resetLinkEmail(deps, token);
      if (!email) return sendInvalidLink(request, reply);
      return sendPage(request, reply, http, {
        title: text(lang, 'title'),
        children: NewPasswordForm({ lang, token, email, csrf: pageFormToken(request, reply, deps.config) }),
      });
    });

    app.post('/cabinet/password-reset/:token', PUBLIC, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const { token } = request.params as { token: string };
      const form = (request.body ?? {}) as Form;
      const password = String(form.password ?? '');
      const email = await resetLinkEmail(deps, token);
      if (!email) return sendInvalidLink(request, reply);
      const problem =
        password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH
          ? 'too_short'
          : password !== String(form.repeat ?? '')
            ? 'mismatch'
            : undefined;
      if (problem)
        return sendPage(request, reply, http, {
          title: text(lang, 'title'),
          status: 400,
          notice: { kind: 'error', text: text(lang, problem) },
          children: NewPasswordForm({ lang, token, email, csrf: pageFormToken(request, reply, deps.config) }),
        });
      if (!(await resetPassword(deps, { token, password, origin: origin(request) })))
        return sendInvalidLink(request, reply);
      return redirectTo(reply, '/cabinet/password-reset?done=1');
    });
  };
}

function NewPasswordForm(props: { lang: Lang; token: string; email: string; csrf: string }): View {
  const { lang } = props;
  return html`<section class="card narrow">
    <h1>${text(lang, 'title')}</h1>
    <p>${text(lang, 'for')} <strong>${props.email}</strong></p>
    <form method="post" action=${`/cabinet/password-reset/${props.token}`}>
      <input type="hidden" name="csrf" value=${props.csrf} />
      <input type="hidden" name="username" autocomplete="username" value=${props.email} />
      <label for="password">${text(lang, 'new_password')}</label>
      <input
        id="password"
        name="password"
        type="password"
        autocomplete="new-password"
        minlength=${PASSWORD_MIN_LENGTH}
        maxlength=${PASSWORD_MAX_LENGTH}
        aria-describedby="password-hint"
        required
      />
      <p id="password-hint" class="muted">${text(lang, 'password_hint')}</p>
      <label for="repeat">${text(lang, 'repeat')}</label>
      <input id="repeat" name="repeat" type="password" autocomplete="new-password" required />
      <button type="submit">${text(lang, 'set')}</button>
    </form>
  </section>`;
}
