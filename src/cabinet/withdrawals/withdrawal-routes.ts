// /cabinet/shops/:shopId/withdrawals: the USDT balance of the shop's book, the
// approval rule, the request form (owners and finance; a viewer sees the list but
// no form, and its POST is 403), and the shop's withdrawals newest first (keyset
// pages, a status filter). A request goes form → preview (fee quote and total
// debit, nothing stored) → confirm with the requester's TOTP code (created and
// reserved by the withdrawals module); the form carries its idempotency key
// (external_id), so a confirm sent twice makes one withdrawal and is answered
// with it without asking for a second code. Detail and decisions:
// withdrawal-detail-routes.ts; the address book: withdrawal-address-routes.ts.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ListPage } from '../../db/list-page.ts';
import { listWithdrawalAddresses } from '../../crypto/withdrawals/withdrawal-addresses.ts';
import {
  createWithdrawal,
  findRepeatedWithdrawal,
  listShopWithdrawals,
  quoteWithdrawal,
  setSinglePersonLimit,
  singlePersonLimit,
  WITHDRAWAL_STATUSES,
  type WithdrawalQuote,
  type WithdrawalStatus,
} from '../../crypto/withdrawals/withdrawal-service.ts';
import type { WithdrawalView } from '../../crypto/withdrawals/withdrawals-views.ts';
import { usdtText } from '../../crypto/receiving/receiving-views.ts';
import { InvalidRequestError } from '../../errors.ts';
import { getBalances } from '../../ledger/balance-service.ts';
import { parsePayoutAmount } from '../../crypto/payouts/payout-service.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { requireTotpCode } from './withdrawal-confirmation.ts';
import { withdrawalAddressRoutes } from './withdrawal-address-routes.ts';
import { withdrawalDetailRoutes } from './withdrawal-detail-routes.ts';
import { CodeField, formField, StatusBadge, text, when, withdrawalsPath } from './withdrawal-views.ts';

const PAGE_SIZE = 50;
const NOTE_MAX_LENGTH = 500;

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'balances.read' as const } } } };
const REQUEST = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'withdrawals.request' as const, money: true } } },
};
const RULE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'withdrawals.rule' as const, money: true } } },
};

function isStatus(value: unknown): value is WithdrawalStatus {
  return typeof value === 'string' && (WITHDRAWAL_STATUSES as readonly string[]).includes(value);
}

/** A fresh idempotency key for one request form: the preview and the confirm carry it. */
function newFormKey(): string {
  return `cab_${randomBytes(16).toString('hex')}`;
}

export function withdrawalRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    await app.register(withdrawalAddressRoutes(deps, http));
    await app.register(withdrawalDetailRoutes(deps, http));
    const withdrawalDeps = { ...deps, chain: deps.chain };

    app.get('/cabinet/shops/:shopId/withdrawals', READ, async (request, reply) => {
      const { lang, session } = cabinetOf(request);
      const shop = shopOf(request);
      const { merchantId, role } = merchantOf(request);
      const query = request.query as { status?: string; cursor?: string; done?: string };
      const status = isStatus(query.status) ? query.status : undefined;
      const [balances, limit, page, addresses] = await Promise.all([
        getBalances(deps, { shopId: shop.shopId, merchantId, book: shop.mode }),
        singlePersonLimit(deps.db, merchantId, shop.mode),
        listShopWithdrawals(deps.db, shop.shopId, { limit: PAGE_SIZE, cursor: query.cursor || undefined, status }),
        listWithdrawalAddresses(deps, merchantId, shop.mode),
      ]);
      const usdt = balances.accounts.find((account) => account.currency === 'USDT' && account.kind === 'main');
      const csrf = session!.csrf_token;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'withdrawals')} · ${shop.name}`,
        notice: query.done === 'rule' ? { kind: 'ok', text: text(lang, 'done_rule') } : undefined,
        children: html`
          <h1>${text(lang, 'withdrawals')}</h1>
          <p class="muted">${shop.name} · ${text(lang, `book_${shop.mode}`)}</p>
          <div class="grid">
            <section class="card" aria-labelledby="balance-title">
              <h2 id="balance-title">${text(lang, 'balance')}</h2>
              <dl class="facts">
                <dt>${text(lang, 'available')}</dt>
                <dd id="usdt-available">${usdt?.available ?? '0'} USDT</dd>
                <dt>${text(lang, 'reserved')}</dt>
                <dd>${usdt?.pending ?? '0'} USDT</dd>
              </dl>
              <p><a href=${`${withdrawalsPath(shop.shopId)}/addresses`}>${text(lang, 'address_book')}</a></p>
            </section>
            ${RuleCard({ lang, shopId: shop.shopId, limit, csrf: roleCan(role, 'withdrawals.rule') ? csrf : undefined })}
          </div>
          ${
            roleCan(role, 'withdrawals.request')
              ? RequestForm({
                  lang,
                  shopId: shop.shopId,
                  csrf,
                  addresses: addresses.filter((entry) => entry.usable),
                  cooldownHours: Math.round(deps.config.withdrawalAddressCooldownMs / 3_600_000),
                })
              : null
          }
          ${WithdrawalList({ lang, shopId: shop.shopId, status, page, firstPage: !query.cursor })}
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/withdrawals/preview', REQUEST, async (request, reply) => {
      const { lang, session, user } = cabinetOf(request);
      const shop = shopOf(request);
      const { merchantId } = merchantOf(request);
      const form = readRequestForm(request.body);
      const quote = await quoteWithdrawal(withdrawalDeps, {
        merchantId,
        shopId: shop.shopId,
        amount: form.amount,
        addressId: form.addressId,
        requester: { userId: user!.id, name: user!.email },
      });
      return sendPage(request, reply, http, {
        title: `${text(lang, 'confirm_title')} · ${shop.name}`,
        children: Confirmation({ lang, shopId: shop.shopId, csrf: session!.csrf_token, quote, form }),
      });
    });

    app.post('/cabinet/shops/:shopId/withdrawals', REQUEST, async (request, reply) => {
      const { user } = cabinetOf(request);
      const shop = shopOf(request);
      const { merchantId } = merchantOf(request);
      const form = readRequestForm(request.body);
      const input = {
        merchantId,
        shopId: shop.shopId,
        externalId: form.externalId,
        amount: form.amount,
        address: '',
        addressId: form.addressId,
        note: form.note,
        requestedBy: user!.email,
        requestedByUserId: user!.id,
        actor: actorOf(request),
      };
      const answer = (made: WithdrawalView) =>
        redirectTo(reply, `${withdrawalsPath(shop.shopId)}/${made.withdrawal_id}?done=requested`);
      // A confirm sent again (double click, retry) answers what the first made: its code is spent by now.
      const repeated = await findRepeatedWithdrawal(withdrawalDeps, input);
      if (repeated) return answer(repeated);
      try {
        await requireTotpCode(deps, request, formField(request.body, 'code'));
      } catch (error) {
        // Its twin, sent at the same moment with the same code, may have made it in the meantime.
        const made = await findRepeatedWithdrawal(withdrawalDeps, input);
        if (made) return answer(made);
        throw error;
      }
      return answer(await createWithdrawal(withdrawalDeps, input));
    });

    app.post('/cabinet/shops/:shopId/withdrawals/rule', RULE, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const { merchantId } = merchantOf(request);
      const typed = formField(request.body, 'limit').trim();
      let maxMicro: bigint | null = null;
      if (typed !== '') {
        try {
          maxMicro = parsePayoutAmount(typed, 'limit');
        } catch {
          throw new InvalidRequestError(text(lang, 'amount_invalid'));
        }
      }
      await requireTotpCode(deps, request, formField(request.body, 'code'));
      await setSinglePersonLimit(deps, {
        merchantId,
        mode: shop.mode,
        maxMicro,
        actor: actorOf(request),
        shopId: shop.shopId,
      });
      return redirectTo(reply, `${withdrawalsPath(shop.shopId)}?done=rule`);
    });
  };
}

interface RequestForm {
  readonly amount: string;
  readonly addressId: string;
  readonly note: string;
  readonly externalId: string;
}

function readRequestForm(body: unknown): RequestForm {
  const note = formField(body, 'note');
  if (note.length > NOTE_MAX_LENGTH)
    throw new InvalidRequestError(`The note must be at most ${NOTE_MAX_LENGTH} characters.`);
  return {
    amount: formField(body, 'amount').trim(),
    addressId: formField(body, 'address_id'),
    note,
    externalId: formField(body, 'external_id'),
  };
}

function RuleCard(props: { lang: Lang; shopId: string; limit: bigint | null; csrf: string | undefined }): View {
  const { lang } = props;
  return html`<section class="card" aria-labelledby="rule-title">
    <h2 id="rule-title">${text(lang, 'rule')}</h2>
    <p id="rule-now">
      ${
        props.limit === null
          ? text(lang, 'rule_none')
          : `${text(lang, 'rule_limit')} ${usdtText(props.limit)} USDT ${text(lang, 'rule_window')}.`
      }
    </p>
    ${
      props.csrf
        ? html`<form method="post" action=${`${withdrawalsPath(props.shopId)}/rule`}>
            ${CsrfField({ token: props.csrf })}
            <label for="rule-limit">${text(lang, 'rule_set')}</label>
            <input
              id="rule-limit"
              name="limit"
              type="text"
              inputmode="decimal"
              maxlength="20"
              value=${props.limit === null ? '' : usdtText(props.limit)}
            />
            ${CodeField({ lang, id: 'rule-code' })}
            <button type="submit" class="secondary">${text(lang, 'rule_save')}</button>
          </form>`
        : html`<p class="muted">${text(lang, 'rule_owner_only')}</p>`
    }
  </section>`;
}

function RequestForm(props: {
  lang: Lang;
  shopId: string;
  csrf: string;
  addresses: ReadonlyArray<{ address_id: string; label: string; address: string }>;
  cooldownHours: number;
}): View {
  const { lang } = props;
  const book = html`<a href=${`${withdrawalsPath(props.shopId)}/addresses`}>${text(lang, 'address_book')}</a>`;
  return html`<section class="card" aria-labelledby="request-title">
    <h2 id="request-title">${text(lang, 'request')}</h2>
    ${
      props.addresses.length === 0
        ? html`<p>${text(lang, 'no_usable_addresses')} ${props.cooldownHours} ${text(lang, 'hours')} · ${book}</p>`
        : html`<form method="post" action=${`${withdrawalsPath(props.shopId)}/preview`} id="withdrawal-request">
            ${CsrfField({ token: props.csrf })}
            <input type="hidden" name="external_id" value=${newFormKey()} />
            <label for="withdrawal-amount">${text(lang, 'amount')}</label>
            <input id="withdrawal-amount" name="amount" type="text" inputmode="decimal" maxlength="20" required />
            <label for="withdrawal-address">${text(lang, 'address')}</label>
            <select id="withdrawal-address" name="address_id" required>
              ${props.addresses.map(
                (entry) => html`<option value=${entry.address_id}>${entry.label} · ${entry.address}</option>`,
              )}
            </select>
            <label for="withdrawal-note">${text(lang, 'note')}</label>
            <textarea id="withdrawal-note" name="note" maxlength="500" rows="2"></textarea>
            <button type="submit">${text(lang, 'preview')}</button>
          </form>`
    }
  </section>`;
}

function Confirmation(props: {
  lang: Lang;
  shopId: string;
  csrf: string;
  quote: WithdrawalQuote;
  form: RequestForm;
}): View {
  const { lang, quote, form } = props;
  return html`<p><a href=${withdrawalsPath(props.shopId)}>${text(lang, 'back')}</a></p>
    <h1>${text(lang, 'confirm_title')}</h1>
    <section class="card">
      <dl class="facts" id="withdrawal-quote">
        <dt>${text(lang, 'amount')}</dt>
        <dd>${quote.amount} USDT</dd>
        <dt>${text(lang, 'network_fee')}</dt>
        <dd>${quote.network_fee} USDT</dd>
        <dt>${text(lang, 'total_debit')}</dt>
        <dd id="total-debit">${quote.total_debit} USDT</dd>
        <dt>${text(lang, 'to')}</dt>
        <dd>${quote.address_label} · <code>${quote.recipient_address}</code></dd>
        ${
          form.note
            ? html`<dt>${text(lang, 'note')}</dt>
                <dd>${form.note}</dd>`
            : null
        }
      </dl>
      <p>${text(lang, quote.awaits_approval ? 'awaits_second' : 'goes_at_once')}</p>
      <form method="post" action=${withdrawalsPath(props.shopId)}>
        ${CsrfField({ token: props.csrf })}
        <input type="hidden" name="external_id" value=${form.externalId} />
        <input type="hidden" name="amount" value=${form.amount} />
        <input type="hidden" name="address_id" value=${form.addressId} />
        <input type="hidden" name="note" value=${form.note} />
        ${CodeField({ lang, id: 'confirm-code' })}
        <button type="submit">${text(lang, 'confirm')}</button>
      </form>
    </section>`;
}

function WithdrawalList(props: {
  lang: Lang;
  shopId: string;
  status: WithdrawalStatus | undefined;
  page: ListPage<WithdrawalView>;
  firstPage: boolean;
}): View {
  const { lang } = props;
  const base = withdrawalsPath(props.shopId);
  const statusQuery = props.status ? `status=${props.status}&` : '';
  return html`<section class="card" aria-labelledby="list-title">
    <h2 id="list-title">${text(lang, 'list')}</h2>
    <form method="get" action=${base} class="actions">
      <label for="status-filter">${text(lang, 'status')}</label>
      <select id="status-filter" name="status">
        <option value="">${text(lang, 'all_statuses')}</option>
        ${WITHDRAWAL_STATUSES.map(
          (status) =>
            html`<option value=${status} selected=${status === props.status}>
              ${text(lang, `status_${status}`)}
            </option>`,
        )}
      </select>
      <button type="submit" class="secondary">${text(lang, 'filter')}</button>
    </form>
    ${
      props.page.data.length === 0
        ? html`<p>${text(lang, 'none_yet')}</p>`
        : html`<div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">${text(lang, 'withdrawal')}</th>
                  <th scope="col">${text(lang, 'status')}</th>
                  <th scope="col">${text(lang, 'total_debit')}</th>
                  <th scope="col">${text(lang, 'requested_by')}</th>
                  <th scope="col">${text(lang, 'created')}</th>
                </tr>
              </thead>
              <tbody>
                ${props.page.data.map(
                  (view) =>
                    html`<tr data-withdrawal=${view.withdrawal_id}>
                      <td>
                        <a href=${`${base}/${view.withdrawal_id}`}><code>${view.withdrawal_id}</code></a>
                        <div class="muted">${view.amount} USDT → <code>${view.recipient_address}</code></div>
                      </td>
                      <td>${StatusBadge({ lang, status: view.status })}</td>
                      <td>${view.total_debit} USDT</td>
                      <td>${view.requested_by}</td>
                      <td>${when(view.created_at)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    <nav class="actions" aria-label=${text(lang, 'list')}>
      ${props.firstPage ? null : html`<a href=${`${base}?${statusQuery}`}>${text(lang, 'first_page')}</a>`}
      ${
        props.page.next_cursor
          ? html`<a href=${`${base}?${statusQuery}cursor=${encodeURIComponent(props.page.next_cursor)}`}
              >${text(lang, 'next_page')}</a
            >`
          : null
      }
    </nav>
  </section>`;
}
