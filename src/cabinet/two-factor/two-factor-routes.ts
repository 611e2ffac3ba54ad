// The second factor's pages: enrolment and management (/cabinet/account/two-factor),
// the second sign-in step (/cabinet/sign-in/two-factor) and step-up (/cabinet/step-up).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import {
  actorOf,
  cabinetOf,
  redirectTo,
  safeBack,
  sendPage,
  setSessionCookie,
  type CabinetHttpDeps,
} from '../cabinet-http.ts';
import { sessionDeps, type CabinetDeps } from '../cabinet-context.ts';
import { completeSecondFactor, markSteppedUp } from '../sessions/session-service.ts';
import type { UserRow } from '../users/user-service.ts';
import { html, type View } from '../views/html.ts';
import { CsrfField, type Notice } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import { totpUri } from './totp.ts';
import {
  checkPasswordAgain,
  checkSecondFactor,
  disableTwoFactor,
  enableTwoFactor,
  enrolmentSecret,
  recoveryCodesLeft,
  regenerateRecoveryCodes,
  type SecondFactorResult,
} from './two-factor-service.ts';
import TWO_FACTOR_TEXTS from './two-factor-texts.json' with { type: 'json' };

const text = translator(TWO_FACTOR_TEXTS);
const SIGNED_IN = { schema: { hide: true }, config: { cabinet: { access: 'signed-in' as const } } };
const SECOND_FACTOR = { schema: { hide: true }, config: { cabinet: { access: 'second-factor' as const } } };
const MANAGE_PAGE = '/cabinet/account/two-factor';

type Form = Record<string, string | undefined>;

function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function refusal(lang: Lang, result: SecondFactorResult, wrong: 'refused' | 'wrong_password'): Notice {
  if (result.kind === 'refused' && result.retryAt)
    return { kind: 'error', text: `${text(lang, 'locked')} ${result.retryAt.toISOString().slice(11, 19)} UTC.` };
  return { kind: 'error', text: text(lang, wrong) };
}

function refusalStatus(result: SecondFactorResult): number {
  return result.kind === 'refused' && result.retryAt ? 429 : 401;
}

export function twoFactorRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  const sessions = sessionDeps(deps);

  /** The enrolment page: the QR code of the pending secret, the secret as text, a field for the first code. */
  async function sendEnrolment(request: FastifyRequest, reply: FastifyReply, notice?: Notice, status = 200) {
    const { lang, user, session } = cabinetOf(request);
    const secret = await enrolmentSecret(deps, user!);
    const svg = await QRCode.toString(totpUri(secret, user!.email), {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
    });
    const required = (request.query as Form).required === '1';
    return sendPage(request, reply, http, {
      title: text(lang, 'title'),
      status,
      notice: notice ?? (required ? { kind: 'info', text: text(lang, 'required') } : undefined),
      children: html`<h1>${text(lang, 'title')}</h1>
        <section class="card">
          <p>${text(lang, 'intro')}</p>
          <img
            class="totp-qr"
            src=${`data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`}
            alt=${text(lang, 'qr_alt')}
            width="192"
            height="192"
          />
          <p>${text(lang, 'secret')}</p>
          <code class="secret" id="totp-secret">${secret.replace(/(.{4})/g, '$1 ').trim()}</code>
          <form method="post" action="/cabinet/account/two-factor/enable">
            ${CsrfField({ token: session!.csrf_token })}
            <label for="code">${text(lang, 'code')}</label>
            <input
              id="code"
              name="code"
              inputmode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9 ]{6,7}"
              required
            />
            <button type="submit">${text(lang, 'enable')}</button>
          </form>
        </section>`,
    });
  }

  function sendRecoveryCodes(request: FastifyRequest, reply: FastifyReply, codes: string[], notice: Notice) {
    const { lang } = cabinetOf(request);
    return sendPage(request, reply, http, {
      title: text(lang, 'recovery_codes'),
      notice,
      children: html`<h1>${text(lang, 'recovery_codes')}</h1>
        <section class="card">
          <p>${text(lang, 'recovery_intro')}</p>
          <ul class="secret recovery-codes" id="recovery-codes">
            ${codes.map((code) => html`<li><code>${code}</code></li>`)}
          </ul>
          <p><a href=${MANAGE_PAGE}>${text(lang, 'continue')}</a></p>
        </section>`,
    });
  }

  /** Regenerating codes and switching off ask for a fresh step-up first. */
  function needsStepUp(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    const { session } = cabinetOf(request);
    if (http.service.steppedUpLately(session!)) return undefined;
    return redirectTo(reply, `/cabinet/step-up?back=${encodeURIComponent(MANAGE_PAGE)}`);
  }

  return async (app: FastifyInstance) => {
    app.get(MANAGE_PAGE, SIGNED_IN, async (request, reply) => {
      const { lang, user, session } = cabinetOf(request);
      // Enrolling is a step-up itself: a stolen cookie alone must not bind the attacker's authenticator.
      if (user!.totp_enabled_at === null) return needsStepUp(request, reply) ?? sendEnrolment(request, reply);
      const left = await recoveryCodesLeft(deps, user!.id);
      const query = request.query as Form;
      return sendPage(request, reply, http, {
        title: text(lang, 'title'),
        notice: query.enabled === '1' ? { kind: 'ok', text: text(lang, 'enabled') } : undefined,
        children: html`<h1>${text(lang, 'title')}</h1>
          <section class="card">
            <dl class="facts">
              <dt>${text(lang, 'is_on')}</dt>
              <dd>${when(user!.totp_enabled_at)}</dd>
              <dt>${text(lang, 'codes_left')}</dt>
              <dd>${left}</dd>
            </dl>
          </section>
          <section class="card">
            <h2>${text(lang, 'recovery_codes')}</h2>
            <p class="muted">${text(lang, 'regenerate_hint')}</p>
            <form method="post" action="/cabinet/account/two-factor/recovery-codes">
              ${CsrfField({ token: session!.csrf_token })}
              <button type="submit" class="secondary">${text(lang, 'regenerate')}</button>
            </form>
          </section>
          <section class="card">
            <form method="post" action="/cabinet/account/two-factor/disable">
              ${CsrfField({ token: session!.csrf_token })}
              <button type="submit" class="danger">${text(lang, 'disable')}</button>
            </form>
          </section>`,
      });
    });

    app.post('/cabinet/account/two-factor/enable', SIGNED_IN, async (request, reply) => {
      const { lang, user, session } = cabinetOf(request);
      if (user!.totp_enabled_at !== null) return redirectTo(reply, MANAGE_PAGE);
      const stepUp = needsStepUp(request, reply);
      if (stepUp) return stepUp;
      const code = String(((request.body ?? {}) as Form).code ?? '');
      const codes = await enableTwoFactor(deps, user!, code, actorOf(request), session!.id);
      if (!codes) return sendEnrolment(request, reply, { kind: 'error', text: text(lang, 'wrong_code') }, 400);
      return sendRecoveryCodes(request, reply, codes, { kind: 'ok', text: text(lang, 'enabled') });
    });

    app.post('/cabinet/account/two-factor/recovery-codes', SIGNED_IN, async (request, reply) => {
      const { lang, user } = cabinetOf(request);
      if (user!.totp_enabled_at === null) return redirectTo(reply, MANAGE_PAGE);
      const stepUp = needsStepUp(request, reply);
      if (stepUp) return stepUp;
      const codes = await regenerateRecoveryCodes(deps, user!, actorOf(request));
      return sendRecoveryCodes(request, reply, codes, { kind: 'ok', text: text(lang, 'recovery_codes') });
    });

    app.post('/cabinet/account/two-factor/disable', SIGNED_IN, async (request, reply) => {
      const { user } = cabinetOf(request);
      if (user!.totp_enabled_at === null) return redirectTo(reply, MANAGE_PAGE);
      const stepUp = needsStepUp(request, reply);
      if (stepUp) return stepUp;
      await disableTwoFactor(deps, user!, actorOf(request));
      return redirectTo(reply, '/cabinet/account');
    });

    app.get('/cabinet/sign-in/two-factor', SECOND_FACTOR, async (request, reply) => {
      const { lang, session } = cabinetOf(request);
      return sendPage(request, reply, http, {
        title: text(lang, 'second_step'),
        children: CodeForm({
          lang,
          action: '/cabinet/sign-in/two-factor',
          heading: text(lang, 'second_step'),
          intro: text(lang, 'second_step_intro'),
          csrf: session!.csrf_token,
          back: safeBack((request.query as Form).back),
          user: undefined,
        }),
      });
    });

    app.post('/cabinet/sign-in/two-factor', SECOND_FACTOR, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      const form = (request.body ?? {}) as Form;
      const back = safeBack(form.back);
      const result = await checkSecondFactor(deps, {
        user: user!,
        code: String(form.code ?? ''),
        actor: actorOf(request),
        purpose: 'sign_in',
      });
      if (result.kind === 'refused')
        return sendPage(request, reply, http, {
          title: text(lang, 'second_step'),
          status: refusalStatus(result),
          notice: refusal(lang, result, 'refused'),
          children: CodeForm({
            lang,
            action: '/cabinet/sign-in/two-factor',
            heading: text(lang, 'second_step'),
            intro: text(lang, 'second_step_intro'),
            csrf: session!.csrf_token,
            back,
            user: undefined,
          }),
        });
      setSessionCookie(reply, deps.config, await completeSecondFactor(sessions, session!.id));
      return redirectTo(reply, back);
    });

    app.get('/cabinet/step-up', SIGNED_IN, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      return sendPage(request, reply, http, {
        title: text(lang, 'step_up'),
        children: StepUpForm({
          lang,
          csrf: session!.csrf_token,
          back: safeBack((request.query as Form).back),
          user: user!,
        }),
      });
    });

    app.post('/cabinet/step-up', SIGNED_IN, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      const form = (request.body ?? {}) as Form;
      const back = safeBack(form.back);
      const actor = actorOf(request);
      const withCode = user!.totp_enabled_at !== null;
      const result = withCode
        ? await checkSecondFactor(deps, { user: user!, code: String(form.code ?? ''), actor, purpose: 'step_up' })
        : await checkPasswordAgain(deps, { user: user!, password: String(form.password ?? ''), actor });
      if (result.kind === 'refused')
        return sendPage(request, reply, http, {
          title: text(lang, 'step_up'),
          status: refusalStatus(result),
          notice: refusal(lang, result, withCode ? 'refused' : 'wrong_password'),
          children: StepUpForm({ lang, csrf: session!.csrf_token, back, user: user! }),
        });
      await markSteppedUp(sessions, session!.id);
      return redirectTo(reply, back);
    });
  };
}

function StepUpForm(props: { lang: Lang; csrf: string; back: string; user: UserRow }): View {
  const { lang } = props;
  const withCode = props.user.totp_enabled_at !== null;
  return CodeForm({
    lang,
    action: '/cabinet/step-up',
    heading: text(lang, 'step_up'),
    intro: text(lang, withCode ? 'step_up_intro_code' : 'step_up_intro_password'),
    csrf: props.csrf,
    back: props.back,
    user: withCode ? undefined : props.user,
  });
}

/** A one-field form: the code (or recovery code), or the password for a user without a second factor (`user` given). */
function CodeForm(props: {
  lang: Lang;
  action: string;
  heading: string;
  intro: string;
  csrf: string;
  back: string;
  user: UserRow | undefined;
}): View {
  const { lang } = props;
  return html`<section class="card narrow">
    <h1>${props.heading}</h1>
    <p>${props.intro}</p>
    <form method="post" action=${props.action}>
      ${CsrfField({ token: props.csrf })}
      <input type="hidden" name="back" value=${props.back} />
      ${
        props.user
          ? html`<input type="hidden" name="username" autocomplete="username" value=${props.user.email} />
              <label for="password">${text(lang, 'password')}</label>
              <input id="password" name="password" type="password" autocomplete="current-password" required />`
          : html`<label for="code">${text(lang, 'code_or_recovery')}</label>
              <input id="code" name="code" autocomplete="one-time-code" required />`
      }
      <button type="submit">${text(lang, 'confirm')}</button>
    </form>
  </section>`;
}
