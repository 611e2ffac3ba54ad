// A single payout asked for by a person (payouts.create: owners, admins, finance;
// a money action with step-up): amount, recipient and an external_id filled with
// a fresh one, so a form sent twice makes one payout. The preview shows the fee
// quote (POST …/payouts/new/preview, nothing reserved); confirming creates the
// payout through the payouts module exactly as POST /v1/crypto/payouts does,
// audited as `payout.requested` in the payout's own statement. A refusal
// (insufficient_funds, a bad address, the shop's limits, payouts switched off)
// is shown as the API's message and creates nothing.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseExternalId, type QuoteView } from '../../crypto/payouts/payout-service.ts';
import { AppError } from '../../errors.ts';
import { actorOf, cabinetOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetModuleDeps } from '../cabinet-context.ts';
import { html, type View } from '../views/html.ts';
import { CsrfField } from '../views/layout.ts';
import type { Lang } from '../views/cabinet-language.ts';
import { payoutText as text } from './payout-listings.ts';

export const CREATE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'payouts.create' as const, money: true, stepUp: true } } },
};

interface PayoutFields {
  readonly amount: string;
  readonly address: string;
  readonly external_id: string;
}

const FIELD_MAX_LENGTH = { amount: 40, address: 100, external_id: 100 } as const;

/** A fresh external_id for a form: the payout's idempotency key. */
export function freshExternalId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

function fieldsOf(source: unknown): PayoutFields {
  const fields = (source ?? {}) as Record<string, unknown>;
  const single = (name: keyof PayoutFields) => {
    const value = fields[name];
    return typeof value === 'string' ? value.trim().slice(0, FIELD_MAX_LENGTH[name] + 1) : '';
  };
  return { amount: single('amount'), address: single('address'), external_id: single('external_id') };
}

/** The message and code the API would answer a refusal with (400s, 409, 503 payouts off); anything else is thrown on. */
export function refusalOf(error: unknown): string {
  if (error instanceof AppError) return `${error.message} (${error.code})`;
  throw error;
}

export function installPayoutForm(app: FastifyInstance, deps: CabinetModuleDeps, http: CabinetHttpDeps): void {
  const base = (shopId: string) => `/cabinet/shops/${shopId}/payouts`;

  app.get('/cabinet/shops/:shopId/payouts/new', CREATE, async (request, reply) => {
    const query = fieldsOf(request.query);
    return sendForm(request, reply, {
      ...query,
      external_id: query.external_id || freshExternalId('payout'),
    });
  });

  async function sendForm(request: FastifyRequest, reply: FastifyReply, fields: PayoutFields, refusal?: string) {
    const { lang, session } = cabinetOf(request);
    const shop = shopOf(request);
    return sendPage(request, reply, http, {
      status: refusal === undefined ? 200 : 400,
      title: `${text(lang, 'new_payout')} · ${shop.name}`,
      notice: refusal === undefined ? undefined : { kind: 'error', text: `${text(lang, 'refused')} ${refusal}` },
      children: html`
        <p><a href=${base(shop.shopId)}>${text(lang, 'all_payouts')}</a></p>
        <h1>${text(lang, 'new_payout')}</h1>
        ${PayoutForm({ lang, action: `${base(shop.shopId)}/new/preview`, csrf: session!.csrf_token, fields })}
      `,
    });
  }

  app.post('/cabinet/shops/:shopId/payouts/new/preview', CREATE, async (request, reply) => {
    const { lang, session } = cabinetOf(request);
    const shop = shopOf(request);
    const fields = fieldsOf(request.body);
    let quote: QuoteView;
    try {
      parseExternalId(fields.external_id, 'external_id');
      quote = await deps.payouts.quote(
        { shopId: shop.shopId, merchantId: shop.merchantId, mode: shop.mode },
        { network: 'TRC20', amount: fields.amount, address: fields.address },
      );
    } catch (error) {
      return sendForm(request, reply, fields, refusalOf(error));
    }
    return sendPage(request, reply, http, {
      title: `${text(lang, 'quote')} · ${shop.name}`,
      children: QuotePage({ lang, base: base(shop.shopId), csrf: session!.csrf_token, fields, quote }),
    });
  });

  app.post('/cabinet/shops/:shopId/payouts/new', CREATE, async (request, reply) => {
    const shop = shopOf(request);
    const fields = fieldsOf(request.body);
    let outcome: { created: boolean; payout: { payout_id: string } };
    try {
      outcome = await deps.payouts.create(
        { shopId: shop.shopId, merchantId: shop.merchantId, mode: shop.mode },
        { external_id: fields.external_id, network: 'TRC20', amount: fields.amount, address: fields.address },
        { actor: actorOf(request) },
      );
    } catch (error) {
      return sendForm(request, reply, fields, refusalOf(error));
    }
    const done = outcome.created ? 'created' : 'repeated';
    return redirectTo(reply, `${base(shop.shopId)}/${outcome.payout.payout_id}?done=${done}`);
  });
}

function PayoutForm(props: { lang: Lang; action: string; csrf: string; fields: PayoutFields }): View {
  const { lang, fields } = props;
  return html`<form method="post" action=${props.action} class="card">
    ${CsrfField({ token: props.csrf })}
    <p class="muted">${text(lang, 'form_intro')}</p>
    <label for="payout-amount">${text(lang, 'amount')}</label>
    <input
      id="payout-amount"
      name="amount"
      type="text"
      inputmode="decimal"
      required
      maxlength="40"
      value=${fields.amount}
      autocomplete="off"
    />
    <label for="payout-address">${text(lang, 'address')}</label>
    <input
      id="payout-address"
      name="address"
      type="text"
      required
      maxlength="100"
      value=${fields.address}
      autocomplete="off"
      spellcheck="false"
    />
    <label for="payout-external-id">${text(lang, 'external_id')}</label>
    <input
      id="payout-external-id"
      name="external_id"
      type="text"
      required
      maxlength="100"
      value=${fields.external_id}
      aria-describedby="payout-external-id-hint"
    />
    <p id="payout-external-id-hint" class="muted">${text(lang, 'external_id_hint')}</p>
    <div class="actions"><button type="submit">${text(lang, 'preview')}</button></div>
  </form>`;
}

function QuotePage(props: { lang: Lang; base: string; csrf: string; fields: PayoutFields; quote: QuoteView }): View {
  const { lang, fields, quote } = props;
  const change = new URLSearchParams({ ...fields }).toString();
  return html`
    <p><a href=${props.base}>${text(lang, 'all_payouts')}</a></p>
    <h1>${text(lang, 'quote')}</h1>
    <section class="card">
      <p class="muted">${text(lang, 'quote_intro')}</p>
      <dl class="facts">
        <dt>${text(lang, 'col_amount')}</dt>
        <dd data-quote="amount">${quote.recipient_amount}</dd>
        <dt>${text(lang, 'col_network_fee')}</dt>
        <dd data-quote="network_fee">${quote.network_fee}</dd>
        <dt>${text(lang, 'col_service_fee')}</dt>
        <dd data-quote="service_fee">${quote.service_fee}</dd>
        <dt>${text(lang, 'col_total_debit')}</dt>
        <dd data-quote="total_debit"><strong>${quote.total_debit}</strong></dd>
        <dt>${text(lang, 'col_address')}</dt>
        <dd><code>${quote.recipient_address}</code></dd>
        <dt>${text(lang, 'col_external_id')}</dt>
        <dd>${fields.external_id}</dd>
      </dl>
      <form method="post" action=${`${props.base}/new`}>
        ${CsrfField({ token: props.csrf })}
        <input type="hidden" name="amount" value=${fields.amount} />
        <input type="hidden" name="address" value=${fields.address} />
        <input type="hidden" name="external_id" value=${fields.external_id} />
        <div class="actions">
          <button type="submit">${text(lang, 'confirm')}</button>
          <a class="button secondary" href=${`${props.base}/new?${change}`}>${text(lang, 'change')}</a>
        </div>
      </form>
    </section>
  `;
}
