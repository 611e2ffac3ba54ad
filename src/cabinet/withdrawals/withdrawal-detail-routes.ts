// /cabinet/shops/:shopId/withdrawals/:withdrawalId: one withdrawal with its
// timeline (requested, approved / rejected / cancelled by whom and when, the
// transfer queued, its transaction, the outcome) and, while it awaits approval,
// the decisions: approve (another member than the requester, owner or finance,
// with a TOTP code typed in the form), reject with a reason, cancel (the requester
// or an approver). People are compared by user id in the withdrawals module.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  approveWithdrawal,
  cancelWithdrawal,
  getShopWithdrawal,
  rejectWithdrawal,
  type WithdrawalPerson,
  type WithdrawalTransferFacts,
} from '../../crypto/withdrawals/withdrawal-service.ts';
import type { WithdrawalView } from '../../crypto/withdrawals/withdrawals-views.ts';
import { ForbiddenError } from '../../errors.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan, type Role } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { Timeline, TransactionLink, type TimelineEntry } from '../views/timeline.ts';
import { requireTotpCode } from './withdrawal-confirmation.ts';
import { CodeField, formField, StatusBadge, text, withdrawalsPath } from './withdrawal-views.ts';

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'balances.read' as const } } } };
const APPROVE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'withdrawals.approve' as const, money: true } } },
};
const CANCEL = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'withdrawals.request' as const, money: true } } },
};
const DONE = ['requested', 'approved', 'rejected', 'cancelled'] as const;

/** The signed-in member as the withdrawals module compares and records them. */
function personOf(request: FastifyRequest): WithdrawalPerson {
  const { user } = cabinetOf(request);
  return { name: user!.email, userId: user!.id, actor: actorOf(request) };
}

export function withdrawalDetailRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/withdrawals/:withdrawalId', READ, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      const shop = shopOf(request);
      const { role } = merchantOf(request);
      const { withdrawalId } = request.params as { withdrawalId: string };
      const { withdrawal, transfer } = await getShopWithdrawal(deps.db, shop.shopId, withdrawalId);
      const done = (request.query as { done?: string }).done;
      const notice = DONE.find((each) => each === done);
      return sendPage(request, reply, http, {
        title: `${text(lang, 'withdrawal')} ${withdrawal.withdrawal_id}`,
        notice: notice ? { kind: 'ok', text: text(lang, `done_${notice}`) } : undefined,
        children: html`
          <p><a href=${withdrawalsPath(shop.shopId)}>${text(lang, 'back_to_list')}</a></p>
          <h1>${text(lang, 'withdrawal')} <code>${withdrawal.withdrawal_id}</code></h1>
          ${Facts({ lang, withdrawal, mode: shop.mode, config: deps.config })}
          ${
            withdrawal.status === 'awaiting_approval'
              ? Decisions({
                  lang,
                  shopId: shop.shopId,
                  withdrawal,
                  role,
                  own: withdrawal.requested_by_user_id === user!.id,
                  csrf: session!.csrf_token,
                })
              : null
          }
          ${Timeline({ lang, entries: timelineOf(lang, withdrawal, transfer, shop.mode, deps.config) })}
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/withdrawals/:withdrawalId/approve', APPROVE, async (request, reply) => {
      const shop = shopOf(request);
      const { withdrawalId } = request.params as { withdrawalId: string };
      await requireTotpCode(deps, request, formField(request.body, 'code'));
      const approved = await approveWithdrawal(deps, withdrawalId, personOf(request), undefined, {
        shopId: shop.shopId,
      });
      return redirectTo(reply, `${withdrawalsPath(shop.shopId)}/${approved.withdrawal_id}?done=approved`);
    });

    app.post('/cabinet/shops/:shopId/withdrawals/:withdrawalId/reject', APPROVE, async (request, reply) => {
      const shop = shopOf(request);
      const { withdrawalId } = request.params as { withdrawalId: string };
      const reason = formField(request.body, 'reason');
      const rejected = await rejectWithdrawal(deps, withdrawalId, personOf(request), reason, undefined, {
        shopId: shop.shopId,
      });
      return redirectTo(reply, `${withdrawalsPath(shop.shopId)}/${rejected.withdrawal_id}?done=rejected`);
    });

    app.post('/cabinet/shops/:shopId/withdrawals/:withdrawalId/cancel', CANCEL, async (request, reply) => {
      const { lang, user } = cabinetOf(request);
      const shop = shopOf(request);
      const { role } = merchantOf(request);
      const { withdrawalId } = request.params as { withdrawalId: string };
      const { withdrawal } = await getShopWithdrawal(deps.db, shop.shopId, withdrawalId);
      // The requester, or someone who may approve withdrawals.
      if (withdrawal.requested_by_user_id !== user!.id && !roleCan(role, 'withdrawals.approve'))
        throw new ForbiddenError(text(lang, 'not_requester_or_approver'));
      const cancelled = await cancelWithdrawal(deps, withdrawalId, personOf(request), { shopId: shop.shopId });
      return redirectTo(reply, `${withdrawalsPath(shop.shopId)}/${cancelled.withdrawal_id}?done=cancelled`);
    });
  };
}

function Facts(props: {
  lang: Lang;
  withdrawal: WithdrawalView;
  mode: 'sandbox' | 'live';
  config: CabinetDeps['config'];
}): View {
  const { lang, withdrawal } = props;
  return html`<section class="card">
    <dl class="facts" id="withdrawal-facts">
      <dt>${text(lang, 'status')}</dt>
      <dd id="withdrawal-status">${StatusBadge({ lang, status: withdrawal.status })}</dd>
      <dt>${text(lang, 'amount')}</dt>
      <dd>${withdrawal.amount} USDT</dd>
      <dt>${text(lang, 'network_fee')}</dt>
      <dd>${withdrawal.network_fee} USDT</dd>
      <dt>${text(lang, 'total_debit')}</dt>
      <dd>${withdrawal.total_debit} USDT</dd>
      ${
        withdrawal.network_fee_actual === null
          ? null
          : html`<dt>${text(lang, 'fee_actual')}</dt>
              <dd>${withdrawal.network_fee_actual} USDT</dd>`
      }
      <dt>${text(lang, 'to')}</dt>
      <dd><code>${withdrawal.recipient_address}</code></dd>
      <dt>${text(lang, 'requested_by')}</dt>
      <dd>${withdrawal.requested_by}</dd>
      ${
        withdrawal.note
          ? html`<dt>${text(lang, 'note')}</dt>
              <dd>${withdrawal.note}</dd>`
          : null
      }
      ${
        withdrawal.tx_hash === null
          ? null
          : html`<dt>${text(lang, 'tx_hash')}</dt>
              <dd id="withdrawal-tx">
                ${TransactionLink({ lang, config: props.config, mode: props.mode, txHash: withdrawal.tx_hash })}
              </dd>`
      }
      ${
        withdrawal.error === null
          ? null
          : html`<dt>${text(lang, 'error')}</dt>
              <dd>${withdrawal.error.message} (<code>${withdrawal.error.code}</code>)</dd>`
      }
      ${
        withdrawal.external_id === null
          ? null
          : html`<dt>${text(lang, 'external_id')}</dt>
              <dd><code>${withdrawal.external_id}</code></dd>`
      }
    </dl>
  </section>`;
}

function Decisions(props: {
  lang: Lang;
  shopId: string;
  withdrawal: WithdrawalView;
  role: Role;
  /** The signed-in member asked for it: they may cancel, never approve. */
  own: boolean;
  csrf: string;
}): View | null {
  const { lang, withdrawal } = props;
  const base = `${withdrawalsPath(props.shopId)}/${withdrawal.withdrawal_id}`;
  const approver = roleCan(props.role, 'withdrawals.approve');
  if (!approver && !props.own) return null;
  return html`<section class="card" aria-labelledby="decide-title">
    <h2 id="decide-title">${text(lang, 'approve_title')}</h2>
    ${props.own ? html`<p>${text(lang, 'own_request')}</p>` : null}
    ${
      approver && !props.own
        ? html`<form method="post" action=${`${base}/approve`}>
              ${CsrfField({ token: props.csrf })} ${CodeField({ lang, id: 'approve-code' })}
              <button type="submit">${text(lang, 'approve')}</button>
            </form>
            <form method="post" action=${`${base}/reject`}>
              ${CsrfField({ token: props.csrf })}
              <label for="reject-reason">${text(lang, 'reason')}</label>
              <textarea id="reject-reason" name="reason" maxlength="500" rows="2"></textarea>
              <button type="submit" class="danger">${text(lang, 'reject')}</button>
            </form>`
        : null
    }
    <form method="post" action=${`${base}/cancel`}>
      ${CsrfField({ token: props.csrf })}
      <button type="submit" class="secondary">${text(lang, 'cancel')}</button>
    </form>
  </section>`;
}

function timelineOf(
  lang: Lang,
  withdrawal: WithdrawalView,
  transfer: WithdrawalTransferFacts | null,
  mode: 'sandbox' | 'live',
  config: CabinetDeps['config'],
): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    {
      at: new Date(withdrawal.created_at),
      what: `${text(lang, 'ev_requested')}: ${withdrawal.amount} USDT`,
      detail: `${text(lang, 'by')} ${withdrawal.requested_by}`,
    },
  ];
  const decision = withdrawal.decision;
  if (decision) {
    const kind = decision.approved ? 'approved' : withdrawal.status === 'cancelled' ? 'cancelled' : 'rejected';
    const who = decision.user_id === null ? `${decision.by} (${text(lang, 'operator')})` : decision.by;
    entries.push({
      at: new Date(decision.at),
      what: text(lang, `ev_${kind}`),
      detail: `${text(lang, 'by')} ${who}${decision.reason ? ` — ${decision.reason}` : ''}`,
    });
  } else if (transfer) {
    entries.push({ at: new Date(transfer.queued_at), what: text(lang, 'ev_sent_at_once') });
  }
  if (withdrawal.tx_hash !== null && transfer) {
    entries.push({
      at: new Date(transfer.queued_at),
      what: text(lang, 'ev_broadcast'),
      detail: html`${TransactionLink({ lang, config, mode, txHash: withdrawal.tx_hash })}${
        transfer.block_number === null ? '' : ` · #${transfer.block_number}`
      }`,
    });
  }
  if (withdrawal.status === 'completed' && withdrawal.completed_at)
    entries.push({
      at: new Date(withdrawal.completed_at),
      what: text(lang, 'ev_completed'),
      detail:
        withdrawal.network_fee_actual === null
          ? undefined
          : `${text(lang, 'fee_actual')}: ${withdrawal.network_fee_actual} USDT`,
    });
  if (withdrawal.status === 'failed' && transfer?.final_at)
    entries.push({
      at: new Date(transfer.final_at),
      what: text(lang, 'ev_failed'),
      detail: withdrawal.error?.message,
    });
  return entries;
}
