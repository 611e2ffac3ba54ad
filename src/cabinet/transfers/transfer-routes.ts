// /cabinet/shops/:shopId/transfers: the merchant's four accounts in the shop's
// book (RUB and USDT, main and payout) with available, pending and total, and a
// form that moves money between two of them through the ledger's own
// createInternalTransfer — what POST /v1/crypto/balance/transfers does, with the
// same rules and idempotency (an external_id carried in the form, so a form sent
// twice moves the money once), audited `balance.transferred` in its transaction.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, InvalidRequestError } from '../../errors.ts';
import { classify } from '../../http/error-handler.ts';
import {
  createInternalTransfer,
  getBalances,
  type AccountBalanceView,
  type LedgerOwner,
} from '../../ledger/balance-service.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { actorOf, cabinetOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html } from '../views/html.ts';
import { CsrfField, type Notice } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import TRANSFER_TEXTS from './transfer-texts.json' with { type: 'json' };

const text = translator(TRANSFER_TEXTS);

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'balances.read' as const } } } };
const MOVE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'balances.transfer' as const, money: true } } },
};

/** The directions a person can choose: within one currency, main to payout or back. */
const DIRECTIONS = ['RUB:main>payout', 'RUB:payout>main', 'USDT:main>payout', 'USDT:payout>main'] as const;
type Direction = (typeof DIRECTIONS)[number];

function ownerOf(shop: ShopProfile): LedgerOwner {
  return { shopId: shop.shopId, merchantId: shop.merchantId, book: shop.mode };
}

function accountLabel(lang: Lang, account: Pick<AccountBalanceView, 'currency' | 'kind'>): string {
  return `${account.currency} · ${text(lang, account.kind === 'payout' ? 'kind_payout' : 'kind_main')}`;
}

function directionLabel(lang: Lang, direction: Direction): string {
  const [currency, path] = direction.split(':') as [AccountBalanceView['currency'], string];
  const [from, to] = path.split('>') as [string, string];
  return `${accountLabel(lang, { currency, kind: from })} → ${accountLabel(lang, { currency, kind: to })}`;
}

function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

export function transferRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  async function show(request: FastifyRequest, reply: FastifyReply, notice?: Notice, status?: number) {
    const { lang, role, session } = cabinetOf(request);
    const shop = shopOf(request);
    const { accounts } = await getBalances(deps, ownerOf(shop));
    const canMove = role !== undefined && roleCan(role, 'balances.transfer');
    return sendPage(request, reply, http, {
      title: `${text(lang, 'transfers')} · ${shop.name}`,
      notice,
      status,
      children: html`
        <p><a href=${`/cabinet/shops/${shop.shopId}`}>${shop.name}</a></p>
        <h1>${text(lang, 'transfers')}</h1>
        <p class="muted">${text(lang, 'intro')}</p>
        ${AccountTable({ lang, accounts })}
        ${
          canMove
            ? TransferForm({ lang, shopId: shop.shopId, csrf: session!.csrf_token, externalId: randomUUID() })
            : html`<p class="muted">${text(lang, 'read_only')}</p>`
        }
      `,
    });
  }

  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/transfers', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const done = (request.query as { done?: string }).done;
      const notice = done === '1' ? { kind: 'ok' as const, text: text(lang, 'done') } : undefined;
      return show(request, reply, notice);
    });

    app.post('/cabinet/shops/:shopId/transfers', MOVE, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      try {
        await moveBetweenAccounts(deps, request, shop);
      } catch (error) {
        if (!(error instanceof AppError) || classify(error).status >= 500) throw error;
        return show(request, reply, { kind: 'error', text: `${text(lang, 'not_done')} ${error.message}` }, 400);
      }
      return redirectTo(reply, `/cabinet/shops/${shop.shopId}/transfers?done=1`);
    });
  };
}

async function moveBetweenAccounts(deps: CabinetDeps, request: FastifyRequest, shop: ShopProfile): Promise<void> {
  const direction = DIRECTIONS.find((candidate) => candidate === field(request, 'direction'));
  if (!direction) throw new InvalidRequestError('Choose where the money goes from and to.');
  const [currency, path] = direction.split(':') as [string, string];
  const [fromKind, toKind] = path.split('>') as [string, string];
  const owner = ownerOf(shop);
  const { accounts } = await getBalances(deps, owner);
  const accountId = (kind: string) =>
    accounts.find((account) => account.currency === currency && account.kind === kind)!.account_id;
  await createInternalTransfer(
    deps,
    owner,
    {
      external_id: `cabinet-${field(request, 'external_id').slice(0, 80)}`,
      from_account_id: accountId(fromKind),
      to_account_id: accountId(toKind),
      amount: field(request, 'amount'),
    },
    actorOf(request),
  );
}

function AccountTable(props: { lang: Lang; accounts: readonly AccountBalanceView[] }) {
  const { lang } = props;
  return html`<section class="card">
    <h2 id="accounts">${text(lang, 'accounts')}</h2>
    <div class="table-wrap" tabindex="0" role="region" aria-labelledby="accounts">
      <table>
        <thead>
          <tr>
            <th scope="col">${text(lang, 'account')}</th>
            <th scope="col">${text(lang, 'available')}</th>
            <th scope="col">${text(lang, 'pending')}</th>
            <th scope="col">${text(lang, 'total')}</th>
          </tr>
        </thead>
        <tbody>
          ${props.accounts.map(
            (account) =>
              html`<tr data-account=${`${account.currency}:${account.kind}`}>
                <th scope="row">${accountLabel(lang, account)}</th>
                <td>${account.available}</td>
                <td>${account.pending}</td>
                <td>${account.total}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function TransferForm(props: { lang: Lang; shopId: string; csrf: string; externalId: string }) {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'new_transfer')}</h2>
    <form method="post" action=${`/cabinet/shops/${props.shopId}/transfers`}>
      ${CsrfField({ token: props.csrf })}
      <input type="hidden" name="external_id" value=${props.externalId} />
      <p>
        <label for="transfer-direction">${text(lang, 'direction')}</label>
        <select id="transfer-direction" name="direction">
          ${DIRECTIONS.map((direction) => html`<option value=${direction}>${directionLabel(lang, direction)}</option>`)}
        </select>
      </p>
      <p>
        <label for="transfer-amount">${text(lang, 'amount')}</label>
        <input
          id="transfer-amount"
          name="amount"
          inputmode="decimal"
          required
          maxlength="30"
          aria-describedby="transfer-amount-hint"
        />
      </p>
      <p id="transfer-amount-hint" class="muted">${text(lang, 'amount_hint')}</p>
      <button type="submit">${text(lang, 'transfer')}</button>
    </form>
  </section>`;
}
