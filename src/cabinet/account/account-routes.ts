// /cabinet/account: the signed-in user's own profile and sessions ("sign out everywhere").
import type { FastifyInstance } from 'fastify';
import { cabinetOf, redirectTo, sendPage, type CabinetHttpDeps } from '../cabinet-http.ts';
import { sessionDeps, type CabinetDeps } from '../cabinet-context.ts';
import { endSession, endSessionsOf, liveSessionsOf, type SessionRow } from '../sessions/session-service.ts';
import { html } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import ACCOUNT_TEXTS from './account-texts.json' with { type: 'json' };

const text = translator(ACCOUNT_TEXTS);
const SIGNED_IN = { schema: { hide: true }, config: { cabinet: { access: 'signed-in' as const } } };

function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function accountRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  const sessions = sessionDeps(deps);
  return async (app: FastifyInstance) => {
    app.get('/cabinet/account', SIGNED_IN, async (request, reply) => {
      const { lang, user, session } = cabinetOf(request);
      const query = request.query as Record<string, string | undefined>;
      const live = await liveSessionsOf(sessions, user!.id);
      const notice =
        query.ended === 'all'
          ? { kind: 'ok' as const, text: `${text(lang, 'ended_all')} ${Number(query.count ?? 0)}` }
          : query.ended === 'one'
            ? { kind: 'ok' as const, text: text(lang, 'ended_one') }
            : undefined;
      return sendPage(request, reply, http, {
        title: text(lang, 'account'),
        notice,
        children: html`
          <h1>${text(lang, 'account')}</h1>
          <section class="card">
            <dl class="facts">
              <dt>${text(lang, 'email')}</dt>
              <dd>${user!.email}</dd>
              <dt>${text(lang, 'two_factor')}</dt>
              <dd>
                ${user!.totp_enabled_at ? text(lang, 'two_factor_on') : text(lang, 'two_factor_off')} ${' · '}<a
                  href="/cabinet/account/two-factor"
                  >${text(lang, 'manage_two_factor')}</a
                >
              </dd>
            </dl>
          </section>
          ${SessionList({ lang, sessions: live, currentId: session!.id, csrf: session!.csrf_token })}
        `,
      });
    });

    app.post('/cabinet/account/sessions/:sessionId/end', SIGNED_IN, async (request, reply) => {
      const { user } = cabinetOf(request);
      const { sessionId } = request.params as { sessionId: string };
      await endSession(sessions, user!.id, sessionId);
      return redirectTo(reply, '/cabinet/account?ended=one');
    });

    app.post('/cabinet/account/sessions/end-others', SIGNED_IN, async (request, reply) => {
      const { user, session } = cabinetOf(request);
      const count = await endSessionsOf(deps, deps.db, user!.id, session!.id);
      return redirectTo(reply, `/cabinet/account?ended=all&count=${count}`);
    });
  };
}

function SessionList(props: { lang: Lang; sessions: SessionRow[]; currentId: string; csrf: string }) {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'sessions')}</h2>
    <p class="muted">${text(lang, 'sessions_intro')}</p>
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">${text(lang, 'started')}</th>
            <th scope="col">${text(lang, 'last_seen')}</th>
            <th scope="col">${text(lang, 'address')}</th>
            <th scope="col">${text(lang, 'browser')}</th>
            <th scope="col"><span class="muted">—</span></th>
          </tr>
        </thead>
        <tbody>
          ${props.sessions.map(
            (session) =>
              html`<tr>
                <td>${when(session.created_at)}</td>
                <td>${when(session.last_seen_at)}</td>
                <td><code>${session.ip}</code></td>
                <td>${session.user_agent.slice(0, 120)}</td>
                <td>
                  ${
                    session.id === props.currentId
                      ? html`<strong>${text(lang, 'this_session')}</strong>`
                      : html`<form method="post" action=${`/cabinet/account/sessions/${session.id}/end`} class="inline">
                          ${CsrfField({ token: props.csrf })}
                          <button type="submit" class="secondary">${text(lang, 'end')}</button>
                        </form>`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <form method="post" action="/cabinet/account/sessions/end-others">
      ${CsrfField({ token: props.csrf })}
      <button type="submit" class="danger">${text(lang, 'end_all')}</button>
    </form>
  </section>`;
}
