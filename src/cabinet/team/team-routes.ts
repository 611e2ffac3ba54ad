// /cabinet/team: the merchant's members and pending invitations; owners and admins
// invite (a one-time link, mailed or shown once), revoke, change roles and remove.
// /cabinet/invites/:token: the invitation's own page, where a new person creates
// their account and an existing user (signed in as the invited email) accepts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  actorOf,
  cabinetOf,
  merchantOf,
  pageFormToken,
  redirectTo,
  sendPage,
  setSessionCookie,
  type CabinetHttpDeps,
} from '../cabinet-http.ts';
import { sessionDeps, type CabinetDeps } from '../cabinet-context.ts';
import { ROLES, roleCan, type Role } from '../roles.ts';
import { switchMerchant } from '../sessions/session-service.ts';
import { html, type View } from '../views/html.ts';
import { CopyButton, CsrfField, type Notice } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import {
  acceptAsNewUser,
  acceptAsUser,
  changeRole,
  inviteMember,
  isTeamRefusal,
  openInvite,
  removeMember,
  revokeInvite,
  teamOf,
  TeamRefusal,
  type OpenInvite,
  type Team,
} from './team-service.ts';
import TEAM_TEXTS from './team-texts.json' with { type: 'json' };

const text = translator(TEAM_TEXTS);

type Form = Record<string, string | undefined>;

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'team.read' as const } } } };
const MANAGE = { schema: { hide: true }, config: { cabinet: { access: { permission: 'team.manage' as const } } } };
const PUBLIC = { schema: { hide: true }, config: { cabinet: { access: 'public' as const } } };

const DONE = ['revoked', 'role_changed', 'removed', 'joined'] as const;
const DONE_TEXT = {
  revoked: 'invite_revoked',
  role_changed: 'role_changed',
  removed: 'member_removed',
  joined: 'joined',
} as const;

function roleLabel(lang: Lang, role: Role): string {
  return text(lang, `role_${role}`);
}

function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function queryNotice(lang: Lang, query: Form): Notice | undefined {
  if (isTeamRefusal(query.refused)) return { kind: 'error', text: text(lang, query.refused) };
  if (query.done === 'invited') return { kind: 'ok', text: `${text(lang, 'invited_mailed')} ${query.to ?? ''}` };
  const done = DONE.find((each) => each === query.done);
  return done ? { kind: 'ok', text: text(lang, DONE_TEXT[done]) } : undefined;
}

/** Runs a team change; a refusal goes back to the team page with its reason. */
async function orRefused(reply: FastifyReply, change: () => Promise<string>): Promise<FastifyReply> {
  try {
    return redirectTo(reply, await change());
  } catch (error) {
    if (error instanceof TeamRefusal) return redirectTo(reply, `/cabinet/team?refused=${error.reason}`);
    throw error;
  }
}

function origin(request: FastifyRequest) {
  return { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '') };
}

export function teamRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  async function sendTeam(request: FastifyRequest, reply: FastifyReply, notice?: Notice, link?: string) {
    const { lang, session, user } = cabinetOf(request);
    const { merchantId, role } = merchantOf(request);
    const team = await teamOf(deps, merchantId);
    return sendPage(request, reply, http, {
      title: text(lang, 'team'),
      notice,
      children: TeamPage({ lang, team, role, selfId: user!.id, csrf: session!.csrf_token, link }),
    });
  }

  function manager(request: FastifyRequest) {
    return { userId: cabinetOf(request).user!.id, actor: actorOf(request) };
  }

  return async (app: FastifyInstance) => {
    app.get('/cabinet/team', READ, async (request, reply) =>
      sendTeam(request, reply, queryNotice(cabinetOf(request).lang, request.query as Form)),
    );

    app.post('/cabinet/team/invites', MANAGE, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const form = (request.body ?? {}) as Form;
      try {
        const invited = await inviteMember(deps, {
          merchantId: merchantOf(request).merchantId,
          manager: manager(request),
          email: String(form.email ?? ''),
          role: String(form.role ?? ''),
          lang,
          roleLabel: (role) => roleLabel(lang, role),
        });
        if (invited.mailed)
          return redirectTo(reply, `/cabinet/team?done=invited&to=${encodeURIComponent(String(form.email).trim())}`);
        // Without a mailer the link is shown this once: the page is the answer to the POST.
        return sendTeam(request, reply, undefined, invited.link);
      } catch (error) {
        if (error instanceof TeamRefusal) return redirectTo(reply, `/cabinet/team?refused=${error.reason}`);
        throw error;
      }
    });

    app.post('/cabinet/team/invites/:inviteId/revoke', MANAGE, async (request, reply) =>
      orRefused(reply, async () => {
        const { inviteId } = request.params as { inviteId: string };
        await revokeInvite(deps, { merchantId: merchantOf(request).merchantId, manager: manager(request), inviteId });
        return '/cabinet/team?done=revoked';
      }),
    );

    app.post('/cabinet/team/members/:userId/role', MANAGE, async (request, reply) =>
      orRefused(reply, async () => {
        const { userId } = request.params as { userId: string };
        const role = String(((request.body ?? {}) as Form).role ?? '');
        await changeRole(deps, { merchantId: merchantOf(request).merchantId, manager: manager(request), userId, role });
        return '/cabinet/team?done=role_changed';
      }),
    );

    app.post('/cabinet/team/members/:userId/remove', MANAGE, async (request, reply) =>
      orRefused(reply, async () => {
        const { userId } = request.params as { userId: string };
        await removeMember(deps, { merchantId: merchantOf(request).merchantId, manager: manager(request), userId });
        return '/cabinet/team?done=removed';
      }),
    );

    app.get('/cabinet/invites/:token', PUBLIC, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      const { token } = request.params as { token: string };
      const open = await openInvite(deps, token);
      if (!open) return sendRefusal(request, reply, 410, 'invite_gone');
      const signedIn = session && !session.pending_second_factor && user;
      if (signedIn && user.email.toLowerCase() !== open.invite.email.toLowerCase())
        return sendRefusal(request, reply, 403, 'wrong_email');
      return sendPage(request, reply, http, {
        title: text(lang, 'invitation'),
        children: InvitePage({
          lang,
          open,
          token,
          csrf: pageFormToken(request, reply, deps.config),
          mode: signedIn ? 'accept' : open.accountExists ? 'sign-in' : 'create',
        }),
      });
    });

    app.post('/cabinet/invites/:token', PUBLIC, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      const { token } = request.params as { token: string };
      const form = (request.body ?? {}) as Form;
      try {
        if (session && !session.pending_second_factor && user) {
          const { merchantId } = await acceptAsUser(deps, {
            token,
            userId: user.id,
            email: user.email,
            actor: actorOf(request),
          });
          await switchMerchant(sessionDeps(deps), session.id, merchantId);
          return redirectTo(reply, '/cabinet/team?done=joined');
        }
        const started = await acceptAsNewUser(deps, {
          token,
          name: String(form.name ?? ''),
          password: String(form.password ?? ''),
          origin: origin(request),
        });
        setSessionCookie(reply, deps.config, started.token);
        return redirectTo(reply, '/cabinet/team?done=joined');
      } catch (error) {
        if (!(error instanceof TeamRefusal)) throw error;
        if (error.reason === 'account_exists')
          return redirectTo(reply, `/cabinet/sign-in?back=${encodeURIComponent(`/cabinet/invites/${token}`)}`);
        if (error.reason === 'bad_name' || error.reason === 'bad_password') {
          const open = await openInvite(deps, token);
          if (open)
            return sendPage(request, reply, http, {
              status: 400,
              title: text(lang, 'invitation'),
              notice: { kind: 'error', text: text(lang, error.reason) },
              children: InvitePage({
                lang,
                open,
                token,
                csrf: pageFormToken(request, reply, deps.config),
                mode: 'create',
                name: String(form.name ?? ''),
              }),
            });
        }
        const status = error.reason === 'wrong_email' ? 403 : error.reason === 'already_member' ? 409 : 410;
        const formOnly = error.reason === 'bad_name' || error.reason === 'bad_password';
        return sendRefusal(request, reply, status, formOnly ? 'invite_gone' : error.reason);
      }
    });
  };

  function sendRefusal(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    reason: Parameters<typeof text>[1],
  ): FastifyReply {
    const { lang } = cabinetOf(request);
    return sendPage(request, reply, http, {
      status,
      title: text(lang, 'invitation'),
      notice: { kind: 'error', text: text(lang, reason) },
      children: html`<h1>${text(lang, 'invitation')}</h1>
        <p><a href="/cabinet">${text(lang, 'team')}</a></p>`,
    });
  }
}

function RoleOptions(props: { lang: Lang; mayAppointOwner: boolean; selected?: Role }): View {
  return html`${ROLES.filter((role) => role !== 'owner' || props.mayAppointOwner).map(
    (role) => html`<option value=${role} selected=${role === props.selected}>${roleLabel(props.lang, role)}</option>`,
  )}`;
}

interface TeamPageProps {
  readonly lang: Lang;
  readonly team: Team;
  readonly role: Role;
  readonly selfId: string;
  readonly csrf: string;
  readonly link: string | undefined;
}

function TeamPage(props: TeamPageProps): View {
  const { lang } = props;
  const manages = roleCan(props.role, 'team.manage');
  return html`
    <h1>${text(lang, 'team')}</h1>
    ${props.link ? InviteLinkCard({ lang, link: props.link }) : null} ${Members(props, manages)}
    ${PendingInvites(props, manages)} ${manages ? InviteForm(props) : null}
  `;
}

function InviteLinkCard(props: { lang: Lang; link: string }): View {
  return html`<section class="card" aria-labelledby="invite-link-title">
    <h2 id="invite-link-title">${text(props.lang, 'invite_link')}</h2>
    <p class="muted">${text(props.lang, 'link_once')}</p>
    <p><code id="invite-link" class="secret">${props.link}</code></p>
    ${CopyButton({ lang: props.lang, target: 'invite-link' })}
  </section>`;
}

function Members(props: TeamPageProps, manages: boolean): View {
  const { lang } = props;
  const mayTouchOwners = props.role === 'owner';
  return html`<section class="card">
    <h2>${text(lang, 'members')}</h2>
    <div class="table-wrap">
      <table class="team-table">
        <thead>
          <tr>
            <th scope="col">${text(lang, 'email')}</th>
            <th scope="col">${text(lang, 'name')}</th>
            <th scope="col">${text(lang, 'role')}</th>
            <th scope="col">${text(lang, 'two_factor')}</th>
            ${manages ? html`<th scope="col">${text(lang, 'actions')}</th>` : null}
          </tr>
        </thead>
        <tbody>
          ${props.team.members.map(
            (member) =>
              html`<tr>
                <td>
                  ${member.email}
                  ${member.user_id === props.selfId ? html`<span class="muted">(${text(lang, 'you')})</span>` : null}
                </td>
                <td>${member.name}</td>
                <td><span class="badge">${roleLabel(lang, member.role)}</span></td>
                <td>${member.totp_enabled_at ? text(lang, 'on') : text(lang, 'off')}</td>
                ${
                  manages
                    ? html`<td>
                        ${
                          member.role === 'owner' && !mayTouchOwners
                            ? html`<span class="muted">—</span>`
                            : MemberActions({
                                lang,
                                csrf: props.csrf,
                                userId: member.user_id,
                                email: member.email,
                                role: member.role,
                                mayAppointOwner: mayTouchOwners,
                              })
                        }
                      </td>`
                    : null
                }
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function MemberActions(props: {
  lang: Lang;
  csrf: string;
  userId: string;
  email: string;
  role: Role;
  mayAppointOwner: boolean;
}): View {
  const { lang } = props;
  return html`<div class="actions">
    <form method="post" action=${`/cabinet/team/members/${props.userId}/role`} class="inline">
      ${CsrfField({ token: props.csrf })}
      <select name="role" aria-label=${`${text(lang, 'role_of')} ${props.email}`}>
        ${RoleOptions({ lang, mayAppointOwner: props.mayAppointOwner, selected: props.role })}
      </select>
      <button type="submit" class="secondary">${text(lang, 'change_role')}</button>
    </form>
    <form method="post" action=${`/cabinet/team/members/${props.userId}/remove`} class="inline">
      ${CsrfField({ token: props.csrf })}
      <button type="submit" class="danger" aria-label=${`${text(lang, 'remove')}: ${props.email}`}>
        ${text(lang, 'remove')}
      </button>
    </form>
  </div>`;
}

function PendingInvites(props: TeamPageProps, manages: boolean): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'pending_invites')}</h2>
    ${
      props.team.invites.length === 0
        ? html`<p class="muted">${text(lang, 'no_invites')}</p>`
        : html`<div class="table-wrap">
            <table class="team-table">
              <thead>
                <tr>
                  <th scope="col">${text(lang, 'email')}</th>
                  <th scope="col">${text(lang, 'role')}</th>
                  <th scope="col">${text(lang, 'expires')}</th>
                  ${manages ? html`<th scope="col">${text(lang, 'actions')}</th>` : null}
                </tr>
              </thead>
              <tbody>
                ${props.team.invites.map(
                  (invite) =>
                    html`<tr>
                      <td>${invite.email}</td>
                      <td>${roleLabel(lang, invite.role)}</td>
                      <td>${when(invite.expires_at)}</td>
                      ${
                        manages
                          ? html`<td>
                              <form method="post" action=${`/cabinet/team/invites/${invite.id}/revoke`} class="inline">
                                ${CsrfField({ token: props.csrf })}
                                <button
                                  type="submit"
                                  class="secondary"
                                  aria-label=${`${text(lang, 'revoke')}: ${invite.email}`}
                                >
                                  ${text(lang, 'revoke')}
                                </button>
                              </form>
                            </td>`
                          : null
                      }
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}

function InviteForm(props: TeamPageProps): View {
  const { lang } = props;
  return html`<section class="card narrow">
    <h2>${text(lang, 'invite')}</h2>
    <p class="muted">${text(lang, 'invite_intro')}</p>
    <form method="post" action="/cabinet/team/invites">
      ${CsrfField({ token: props.csrf })}
      <label for="invite-email">${text(lang, 'email')}</label>
      <input id="invite-email" name="email" type="email" autocomplete="off" required maxlength="320" />
      <label for="invite-role">${text(lang, 'role')}</label>
      <select id="invite-role" name="role">
        ${RoleOptions({ lang, mayAppointOwner: props.role === 'owner', selected: 'viewer' })}
      </select>
      <button type="submit">${text(lang, 'send_invite')}</button>
    </form>
  </section>`;
}

function InvitePage(props: {
  lang: Lang;
  open: OpenInvite;
  token: string;
  csrf: string;
  mode: 'accept' | 'sign-in' | 'create';
  name?: string;
}): View {
  const { lang, open } = props;
  const action = `/cabinet/invites/${props.token}`;
  return html`<section class="card narrow">
    <h1>${text(lang, 'invitation')}</h1>
    <p>
      ${text(lang, 'invited_to')} <strong>${open.merchantName}</strong> ${text(lang, 'as_role')}${' '}
      <strong>${roleLabel(lang, open.invite.role)}</strong>.
    </p>
    <p class="muted">${text(lang, 'for_email')} ${open.invite.email}</p>
    ${
      props.mode === 'accept'
        ? html`<form method="post" action=${action}>
            <input type="hidden" name="csrf" value=${props.csrf} />
            <button type="submit">${text(lang, 'accept')}</button>
          </form>`
        : props.mode === 'sign-in'
          ? html`<p>${text(lang, 'sign_in_first')}</p>
              <p>
                <a href=${`/cabinet/sign-in?back=${encodeURIComponent(action)}`}>${text(lang, 'sign_in_to_accept')}</a>
              </p>`
          : html`<p>${text(lang, 'create_account')}</p>
              <form method="post" action=${action}>
                <input type="hidden" name="csrf" value=${props.csrf} />
                <label for="invite-name">${text(lang, 'name')}</label>
                <input
                  id="invite-name"
                  name="name"
                  type="text"
                  autocomplete="name"
                  required
                  maxlength="200"
                  value=${props.name ?? ''}
                />
                <label for="invite-password">${text(lang, 'password')}</label>
                <input
                  id="invite-password"
                  name="password"
                  type="password"
                  autocomplete="new-password"
                  required
                  minlength="10"
                  maxlength="200"
                />
                <button type="submit">${text(lang, 'accept')}</button>
              </form>`
    }
  </section>`;
}
