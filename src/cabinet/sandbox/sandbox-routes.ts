// /cabinet/shops/:shopId/sandbox: on a sandbox shop, forms that drive the test
// helpers through the very functions /v1/test_helpers calls — pay, fail or
// expire a payment; send a USDT deposit to an address on the sandbox chain; mine
// blocks. A live shop has no such page (404). Each outcome is shown on the page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  armNextTransferOutcome,
  drainHotWalletTrx,
  faucet,
  mineBlocks,
  reorgChain,
  setUsdtBlacklisted,
  simulateDeposit,
} from '../../crypto/receiving/sandbox-chain-service.ts';
import { NEXT_TRANSFER_OUTCOMES } from '../../crypto/simchain/chain-state.ts';
import { AppError, InvalidRequestError } from '../../errors.ts';
import { classify } from '../../http/error-handler.ts';
import { runTestHelper, type TestHelperAction } from '../../payments/payment-service.ts';
import { CabinetPageError, cabinetOf, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { html } from '../views/html.ts';
import { CsrfField, type Notice } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import SANDBOX_TEXTS from './sandbox-texts.json' with { type: 'json' };

const text = translator(SANDBOX_TEXTS);

const TOOLS = { schema: { hide: true }, config: { cabinet: { access: { permission: 'sandbox.tools' as const } } } };
const PAYMENT_ACTIONS: readonly TestHelperAction[] = ['pay', 'fail', 'expire'];

function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** The sandbox shop of the route; a live shop's sandbox page does not exist. */
function sandboxShopOf(request: FastifyRequest) {
  const shop = shopOf(request);
  if (shop.mode !== 'sandbox') throw new CabinetPageError(404, 'not_found');
  return shop;
}

export function sandboxRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  function show(request: FastifyRequest, reply: FastifyReply, notice?: Notice, status?: number) {
    const { lang, session } = cabinetOf(request);
    const shop = sandboxShopOf(request);
    return sendPage(request, reply, http, {
      title: `${text(lang, 'sandbox')} · ${shop.name}`,
      notice,
      status,
      children: html`
        <h1>${text(lang, 'sandbox')}</h1>
        <p class="muted">${shop.name} · <code>${shop.shopId}</code></p>
        <p>${text(lang, 'intro')}</p>
        ${SandboxForms({ lang, base: `/cabinet/shops/${shop.shopId}/sandbox`, csrf: session!.csrf_token })}
        ${ChainTools({ lang, base: `/cabinet/shops/${shop.shopId}/sandbox`, csrf: session!.csrf_token })}
      `,
    });
  }

  /** Runs one tool: its outcome, or its refusal (a 4xx of the API) as an error notice on the page. */
  async function run(request: FastifyRequest, reply: FastifyReply, tool: (lang: Lang) => Promise<string>) {
    const { lang } = cabinetOf(request);
    sandboxShopOf(request);
    try {
      return show(request, reply, { kind: 'ok', text: await tool(lang) });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const { status, body } = classify(error);
      if (status >= 500) throw error;
      return show(request, reply, { kind: 'error', text: `${text(lang, 'refused')} ${body.message}` }, status);
    }
  }

  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/sandbox', TOOLS, async (request, reply) => show(request, reply));

    app.post('/cabinet/shops/:shopId/sandbox/payment', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const shop = shopOf(request);
        const action = PAYMENT_ACTIONS.find((each) => each === field(request, 'action')) ?? 'pay';
        const payment = await runTestHelper(deps, shop, field(request, 'payment_id'), action);
        return `${text(lang, 'payment_done')} ${payment.status}: ${payment.payment_id}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/deposit', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const sent = await simulateDeposit(deps, shopOf(request), {
          address: field(request, 'address'),
          amount: field(request, 'amount'),
        });
        return `${text(lang, 'deposit_done')} ${sent.tx_id}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/blocks', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const count = field(request, 'count');
        const mined = await mineBlocks(deps, shopOf(request), /^\d{1,6}$/.test(count) ? Number(count) : Number.NaN);
        return `${text(lang, 'mine_done')} ${mined.head_block}, ${text(lang, 'solid')} ${mined.solidified_block}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/reorg', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const depth = field(request, 'depth');
        const done = await reorgChain(deps, shopOf(request), /^\d{1,6}$/.test(depth) ? Number(depth) : Number.NaN);
        return `${text(lang, 'reorg_done')} ${done.head_block}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/next-transfer', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const outcome = NEXT_TRANSFER_OUTCOMES.find((each) => each === field(request, 'outcome'));
        if (!outcome) throw new InvalidRequestError(`outcome must be one of ${NEXT_TRANSFER_OUTCOMES.join(', ')}.`);
        const armed = await armNextTransferOutcome(deps, shopOf(request), {
          address: field(request, 'address'),
          outcome,
        });
        return `${text(lang, 'armed')} ${armed.address}: ${text(lang, `outcome_${armed.outcome}`)}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/blacklist', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const listed = field(request, 'listed') === 'on';
        const done = await setUsdtBlacklisted(deps, shopOf(request), {
          address: field(request, 'address') || undefined,
          listed,
        });
        return `${text(lang, done.listed ? 'blacklist_on' : 'blacklist_off')} ${done.address}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/faucet', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const optional = (name: string) => field(request, name) || undefined;
        const after = await faucet(deps, shopOf(request), {
          address: optional('address'),
          usdt: optional('usdt'),
          trx: optional('trx'),
        });
        return `${text(lang, 'faucet_done')} ${after.usdt} USDT, ${after.trx} TRX: ${after.address}`;
      }),
    );

    app.post('/cabinet/shops/:shopId/sandbox/drain', TOOLS, (request, reply) =>
      run(request, reply, async (lang) => {
        const drained = await drainHotWalletTrx(deps, shopOf(request));
        return `${text(lang, 'drain_done')} ${drained.drained_trx} TRX: ${drained.address}`;
      }),
    );
  };
}

function ChainTools(props: { lang: Lang; base: string; csrf: string }) {
  const { lang, base, csrf } = props;
  return html`<section class="card">
    <h2>${text(lang, 'chain_tools')}</h2>
    <p class="muted">${text(lang, 'chain_tools_intro')}</p>
    <form method="post" action=${`${base}/reorg`}>
      ${CsrfField({ token: csrf })}
      <h3>${text(lang, 'reorg')}</h3>
      <p>
        <label for="sandbox-depth">${text(lang, 'depth')}</label>
        <input id="sandbox-depth" name="depth" type="number" min="1" max="18" value="1" required />
      </p>
      <button type="submit" class="secondary">${text(lang, 'reorg_do')}</button>
    </form>
    <form method="post" action=${`${base}/next-transfer`}>
      ${CsrfField({ token: csrf })}
      <h3>${text(lang, 'next_transfer')}</h3>
      <div class="grid">
        <p>
          <label for="sandbox-next-address">${text(lang, 'address')}</label>
          <input id="sandbox-next-address" name="address" required autocomplete="off" />
        </p>
        <p>
          <label for="sandbox-outcome">${text(lang, 'outcome')}</label>
          <select id="sandbox-outcome" name="outcome">
            ${NEXT_TRANSFER_OUTCOMES.map((outcome) => html`<option value=${outcome}>${text(lang, `outcome_${outcome}`)}</option>`)}
          </select>
        </p>
      </div>
      <button type="submit" class="secondary">${text(lang, 'arm')}</button>
    </form>
    <form method="post" action=${`${base}/blacklist`}>
      ${CsrfField({ token: csrf })}
      <h3>${text(lang, 'blacklist')}</h3>
      <p>
        <label for="sandbox-blacklist-address">${text(lang, 'blacklist_address')}</label>
        <input id="sandbox-blacklist-address" name="address" autocomplete="off" />
      </p>
      <p>
        <label class="check"><input type="checkbox" name="listed" checked /> ${text(lang, 'listed')}</label>
      </p>
      <button type="submit" class="secondary">${text(lang, 'blacklist_do')}</button>
    </form>
    <form method="post" action=${`${base}/faucet`}>
      ${CsrfField({ token: csrf })}
      <h3>${text(lang, 'faucet')}</h3>
      <div class="grid">
        <p>
          <label for="sandbox-faucet-address">${text(lang, 'faucet_address')}</label>
          <input id="sandbox-faucet-address" name="address" autocomplete="off" />
        </p>
        <p>
          <label for="sandbox-faucet-usdt">${text(lang, 'usdt')}</label>
          <input id="sandbox-faucet-usdt" name="usdt" inputmode="decimal" />
        </p>
        <p>
          <label for="sandbox-faucet-trx">${text(lang, 'trx')}</label>
          <input id="sandbox-faucet-trx" name="trx" inputmode="decimal" />
        </p>
      </div>
      <button type="submit" class="secondary">${text(lang, 'faucet_do')}</button>
    </form>
    <form method="post" action=${`${base}/drain`}>
      ${CsrfField({ token: csrf })}
      <h3>${text(lang, 'drain')}</h3>
      <button type="submit" class="danger">${text(lang, 'drain_do')}</button>
    </form>
  </section>`;
}

function SandboxForms(props: { lang: Lang; base: string; csrf: string }) {
  const { lang, base, csrf } = props;
  return html`
    <section class="card">
      <h2>${text(lang, 'payment')}</h2>
      <form method="post" action=${`${base}/payment`}>
        ${CsrfField({ token: csrf })}
        <p>
          <label for="sandbox-payment-id">${text(lang, 'payment_id')}</label>
          <input id="sandbox-payment-id" name="payment_id" required autocomplete="off" />
        </p>
        <p class="actions">
          ${PAYMENT_ACTIONS.map(
            (action) =>
              html`<button type="submit" name="action" value=${action} class=${action === 'pay' ? '' : 'secondary'}>
                ${text(lang, action)}
              </button>`,
          )}
        </p>
      </form>
    </section>
    <section class="card">
      <h2>${text(lang, 'deposit')}</h2>
      <form method="post" action=${`${base}/deposit`}>
        ${CsrfField({ token: csrf })}
        <div class="grid">
          <p>
            <label for="sandbox-address">${text(lang, 'address')}</label>
            <input id="sandbox-address" name="address" required autocomplete="off" />
          </p>
          <p>
            <label for="sandbox-amount">${text(lang, 'amount')}</label>
            <input id="sandbox-amount" name="amount" inputmode="decimal" required />
          </p>
        </div>
        <button type="submit">${text(lang, 'send')}</button>
      </form>
    </section>
    <section class="card">
      <h2>${text(lang, 'blocks')}</h2>
      <form method="post" action=${`${base}/blocks`}>
        ${CsrfField({ token: csrf })}
        <p>
          <label for="sandbox-count">${text(lang, 'count')}</label>
          <input id="sandbox-count" name="count" type="number" min="1" max="1000" value="1" required />
        </p>
        <button type="submit">${text(lang, 'mine')}</button>
      </form>
    </section>
  `;
}
