// /cabinet/shops/:shopId/methods: a shop's payment methods (card, SBP, SberPay) —
// on/off, the amount range and the payer fee. Changes go through the payments
// module's updateShopMethod, the CLI's own function: the same validation, the
// method-settings cache dropped at commit, `method.changed` audited in the same
// transaction.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../../errors.ts';
import { formatMinor } from '../../money/decimal.ts';
import {
  isPaymentMethod,
  parseFeePercent,
  parseRubles,
  shopMethodSettings,
  updateShopMethod,
  type MethodSettings,
} from '../../payments/payment-methods.ts';
import { actorOf, cabinetOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html } from '../views/html.ts';
import { CsrfField, type Notice } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import METHOD_TEXTS from './method-texts.json' with { type: 'json' };

const text = translator(METHOD_TEXTS);

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'methods.read' as const } } } };
const MANAGE = { schema: { hide: true }, config: { cabinet: { access: { permission: 'methods.manage' as const } } } };

const rub = (kopecks: bigint) => formatMinor(kopecks, 'RUB');
const percent = (basisPoints: number) => (basisPoints / 100).toFixed(2);

function methodName(lang: Lang, method: MethodSettings['method']): string {
  return text(lang, `method_${method}`);
}

/** The form's fields as the service takes them; a bad amount or fee is refused as the CLI refuses it. */
function changeOf(lang: Lang, body: Record<string, unknown>) {
  const field = (name: string) => (typeof body[name] === 'string' ? body[name] : '');
  return {
    enabled: field('enabled') === 'on',
    minKopecks: parseRubles(field('min'), text(lang, 'min')),
    maxKopecks: parseRubles(field('max'), text(lang, 'max')),
    feeBasisPoints: parseFeePercent(field('fee_percent'), text(lang, 'fee')),
  };
}

export function methodRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  async function showMethods(request: FastifyRequest, reply: FastifyReply, notice?: Notice, status?: number) {
    const { lang, role, session } = cabinetOf(request);
    const shop = shopOf(request);
    const settings = await shopMethodSettings(deps.db, shop.shopId);
    const canManage = role !== undefined && roleCan(role, 'methods.manage');
    return sendPage(request, reply, http, {
      title: `${text(lang, 'methods')} · ${shop.name}`,
      notice,
      status,
      children: html`
        <h1>${text(lang, 'methods')}</h1>
        <p class="muted">${shop.name} · <code>${shop.shopId}</code></p>
        <p>${text(lang, 'intro')}</p>
        ${
          canManage
            ? settings.map((entry) =>
                MethodForm({ lang, shopId: shop.shopId, settings: entry, csrf: session!.csrf_token }),
              )
            : html`<p class="muted">${text(lang, 'read_only')}</p>
                ${MethodTable({ lang, settings })}`
        }
      `,
    });
  }

  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/methods', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const saved = (request.query as { saved?: string }).saved;
      const notice =
        saved !== undefined && isPaymentMethod(saved)
          ? { kind: 'ok' as const, text: `${text(lang, 'saved')} ${methodName(lang, saved)}` }
          : undefined;
      return showMethods(request, reply, notice);
    });

    app.post('/cabinet/shops/:shopId/methods/:method', MANAGE, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const { method } = request.params as { method: string };
      try {
        if (!isPaymentMethod(method)) throw new InvalidRequestError(`unknown method "${method.slice(0, 40)}"`);
        const change = changeOf(lang, (request.body ?? {}) as Record<string, unknown>);
        await updateShopMethod(deps, shop.shopId, method, change, actorOf(request));
      } catch (error) {
        if (!(error instanceof InvalidRequestError)) throw error;
        return showMethods(request, reply, { kind: 'error', text: `${text(lang, 'not_saved')} ${error.message}` }, 400);
      }
      return redirectTo(reply, `/cabinet/shops/${shop.shopId}/methods?saved=${method}`);
    });
  };
}

function MethodForm(props: { lang: Lang; shopId: string; settings: MethodSettings; csrf: string }) {
  const { lang, settings } = props;
  const id = (name: string) => `${settings.method}-${name}`;
  return html`<section class="card">
    <h2>${methodName(lang, settings.method)}</h2>
    <form method="post" action=${`/cabinet/shops/${props.shopId}/methods/${settings.method}`}>
      ${CsrfField({ token: props.csrf })}
      <p>
        <label>
          <input type="checkbox" name="enabled" checked=${settings.enabled} />
          ${' '}${text(lang, 'enabled')}
        </label>
      </p>
      <div class="grid">
        <p>
          <label for=${id('min')}>${text(lang, 'min')}</label>
          <input id=${id('min')} name="min" inputmode="decimal" required value=${rub(settings.minKopecks)} />
        </p>
        <p>
          <label for=${id('max')}>${text(lang, 'max')}</label>
          <input id=${id('max')} name="max" inputmode="decimal" required value=${rub(settings.maxKopecks)} />
        </p>
        <p>
          <label for=${id('fee')}>${text(lang, 'fee')}</label>
          <input
            id=${id('fee')}
            name="fee_percent"
            inputmode="decimal"
            required
            value=${percent(settings.feeBasisPoints)}
          />
        </p>
      </div>
      <p class="muted">${text(lang, 'amount_hint')} ${text(lang, 'fee_hint')}</p>
      <button type="submit">${text(lang, 'save')}</button>
    </form>
  </section>`;
}

function MethodTable(props: { lang: Lang; settings: readonly MethodSettings[] }) {
  const { lang } = props;
  return html`<section class="card">
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">${text(lang, 'methods')}</th>
            <th scope="col">${text(lang, 'status')}</th>
            <th scope="col">${text(lang, 'min')}</th>
            <th scope="col">${text(lang, 'max')}</th>
            <th scope="col">${text(lang, 'fee')}</th>
          </tr>
        </thead>
        <tbody>
          ${props.settings.map(
            (entry) =>
              html`<tr>
                <td>${methodName(lang, entry.method)}</td>
                <td>${entry.enabled ? text(lang, 'enabled') : text(lang, 'disabled')}</td>
                <td>${rub(entry.minKopecks)}</td>
                <td>${rub(entry.maxKopecks)}</td>
                <td>${percent(entry.feeBasisPoints)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}
