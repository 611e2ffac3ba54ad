// The hosted payment page at /pay/{order_code} (outside /v1: no API key).
// GET renders; POST actions are CSRF-checked (page-security.ts), rate limited
// per IP, and answer with a redirect back to the page (post/redirect/get). A page
// waiting on a live charge polls the small status JSON (/pay/{order_code}/status).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { ModuleRoutes } from '../../gateway-module.ts';
import { requestLang, type Lang } from '../../hosted-pages/page-language.ts';
import { layout } from '../../hosted-pages/page-layout.ts';
import { limitPageRequests, sendPage, type PagePermissions } from '../../hosted-pages/page-reply.ts';
import { classify } from '../../http/error-handler.ts';
import type { CardDetails } from '../connectors/acquirer-connector.ts';
import type { PaymentMethod } from '../payment-tables.ts';
import { isPaymentMethod } from '../payment-methods.ts';
import { text } from './page-i18n.ts';
import {
  cardForm,
  checkAgainUrl,
  confirmForm,
  countdownScript,
  methodChoice,
  qrForm,
  qrStartForm,
  statusCard,
  statusPollScript,
  summary,
  toBankCard,
  toBankScript,
  waitingCard,
  type FormContext,
  type StatusCardKind,
} from './payment-page-html.ts';
import {
  ATTEMPT_PATTERN,
  csrfToken,
  csrfTokenValid,
  newAttemptNonce,
  newPageSecret,
  pageCookie,
  pageSecretFrom,
} from './page-security.ts';
import {
  confirmFromPage,
  loadPageState,
  loadPayerStatus,
  payFromPage,
  qrPayloadFor,
  refreshOnReturn,
  type PageDeps,
  type PageState,
  type PayResult,
} from './payment-page-service.ts';

const FORM_BODY_LIMIT_BYTES = 4 * 1024;
const PAGE_REQUESTS_PER_MINUTE_PER_IP = 300;
const PAGE_ACTIONS_PER_MINUTE_PER_IP = 30;
/** Its forms post to /pay/…; its script only counts down. */
const PAYMENT_PAGE_PERMISSIONS: PagePermissions = { postsForms: true, fetchesOwnOrigin: false };
/** A page waiting on a live charge also polls /pay/{order_code}/status. */
const WAITING_PAGE_PERMISSIONS: PagePermissions = { postsForms: true, fetchesOwnOrigin: true };
/** Where JavaScript is off, a waiting page asks again this often. */
const NOSCRIPT_REFRESH_SECONDS = 15;
const STATUS_ROUTE = '/pay/:order_code/status';

type Form = Record<string, string>;

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function parseCard(form: Form): CardDetails | undefined {
  const number = (form['cc-number'] ?? '').replace(/[\s-]/g, '');
  const expiry = /^(0[1-9]|1[0-2])\s*\/\s*(\d{2}|\d{4})$/.exec((form['cc-exp'] ?? '').trim());
  const securityCode = (form['cc-csc'] ?? '').trim();
  if (!/^\d{12,19}$/.test(number) || !luhnValid(number) || !expiry || !/^\d{3,4}$/.test(securityCode)) return undefined;
  const year = expiry[2]!.length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2]);
  return { number, expiryMonth: Number(expiry[1]), expiryYear: year, securityCode };
}

function qrSvg(payload: string): Promise<string> {
  return QRCode.toString(payload, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
}

function errorPageKind(status: number): StatusCardKind {
  if (status === 404) return 'notFound';
  if (status === 413) return 'tooLarge';
  if (status === 429) return 'tooMany';
  return status < 500 ? 'badRequest' : 'internal';
}

export const paymentPageRoutes =
  (context: PageDeps): ModuleRoutes =>
  async (app) => {
    const secureCookie = context.config.publicUrl.startsWith('https:');

    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_request, body, done) => {
        const form: Form = {};
        for (const [key, value] of new URLSearchParams(body as string))
          if (!(key in form)) form[key] = value.slice(0, 200);
        done(null, form);
      },
    );

    await limitPageRequests(app, { name: 'page', perMinutePerIp: PAGE_REQUESTS_PER_MINUTE_PER_IP });
    const actionLimit = {
      rateLimit: {
        max: PAGE_ACTIONS_PER_MINUTE_PER_IP,
        timeWindow: 60_000,
        keyGenerator: (request: FastifyRequest) => `action:${request.ip}`,
      },
    };

    function simplePage(
      reply: FastifyReply,
      lang: Lang,
      status: number,
      kind: Parameters<typeof statusCard>[1],
      switchPath: string,
    ): FastifyReply {
      return sendPage(reply, status, PAYMENT_PAGE_PERMISSIONS, (nonce) =>
        layout({ lang, title: text(lang, 'title'), body: statusCard(lang, kind), nonce, switchPath }),
      );
    }

    // The payer reads these, not an integrator: a page in the payer's language
    // with the status the API would give (and its Retry-After), never API JSON.
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const { status, body, headers, unexpected } = classify(error);
      if (unexpected) request.log.error({ err: error }, 'unexpected error on the payment page');
      else request.log.info({ status }, 'payment page request refused');
      // The status JSON the page's script polls answers in the API's error shape.
      if (request.routeOptions.url === STATUS_ROUTE)
        return reply
          .code(status)
          .headers(headers)
          .header('cache-control', 'no-store')
          .send({ ...body, request_id: request.id });
      const orderCode = (request.params as { order_code?: unknown } | undefined)?.order_code;
      const switchPath =
        typeof orderCode === 'string' && /^[A-Za-z0-9]{1,32}$/.test(orderCode) ? `/pay/${orderCode}` : '/pay';
      return simplePage(reply.headers(headers), requestLang(request), status, errorPageKind(status), switchPath);
    });

    interface View {
      readonly method?: PaymentMethod | undefined;
      readonly notice?: string | undefined;
      readonly chargeKey?: string | undefined;
      /** The payer came back through /return: an unanswered redirect charge shows "waiting for the bank". */
      readonly returned?: boolean | undefined;
      /** Just charged: the card step continues at the acquirer's page of the newest attempt. */
      readonly toBank?: boolean | undefined;
    }

    interface PendingView {
      readonly body: string;
      /** It waits on a live charge: its script polls the status JSON. */
      readonly waiting: boolean;
      /** It hands the payer on to the acquirer's page at this URL. */
      readonly leaveTo?: string | undefined;
    }

    /** What the pending page shows, and whether it waits on a live charge (and so polls). */
    async function pendingBody(
      state: PageState,
      form: FormContext,
      option: PageState['options'][number] | undefined,
      view: View,
    ): Promise<PendingView> {
      const { lang } = form;
      const latest = state.latestAttempt;
      const live = state.shopMode === 'live';
      const acquirerPage =
        live && state.stage === 'payer_action' && latest?.payer_action_kind === 'redirect'
          ? latest.payer_action_url
          : null;
      if (view.chargeKey) return { body: confirmForm(form, view.chargeKey), waiting: false };
      if (!option) {
        const body = state.options.length
          ? methodChoice(lang, form.orderCode, state.options)
          : statusCard(lang, 'unavailable');
        return { body, waiting: false };
      }
      // A live charge in flight: no second charge is offered while the acquirer holds one.
      if (live && state.stage === 'processing')
        return { body: waitingCard(lang, form.orderCode, 'processing'), waiting: true };
      if (acquirerPage && view.returned)
        return { body: waitingCard(lang, form.orderCode, 'returned', acquirerPage), waiting: true };
      if (acquirerPage && view.toBank && /^https?:\/\//.test(acquirerPage))
        return { body: toBankCard(lang, acquirerPage), waiting: false, leaveTo: acquirerPage };
      if (option.method === 'card')
        return { body: cardForm(form, undefined, state.shopMode === 'sandbox'), waiting: false };
      if (!live) {
        const link = qrPayloadFor(context, state, option.method)!;
        return { body: qrForm(form, option.method, { svg: await qrSvg(link), link }, 'sandbox'), waiting: false };
      }
      if (state.waitingQr?.method === option.method) {
        // The acquirer's QR of the charge; on a phone the link opens the bank app.
        const svg = await qrSvg(state.waitingQr.payload);
        return { body: qrForm(form, option.method, { svg, link: state.waitingQr.link }, 'waiting'), waiting: true };
      }
      return { body: qrStartForm(form, option.method), waiting: false };
    }

    async function renderPage(
      request: FastifyRequest,
      reply: FastifyReply,
      state: PageState,
      lang: Lang,
      view: View,
    ): Promise<FastifyReply> {
      const payment = state.payment;
      const existingSecret = pageSecretFrom(request.headers.cookie);
      const secret = existingSecret ?? newPageSecret();
      const form: FormContext = {
        lang,
        orderCode: payment.order_code,
        csrf: csrfToken(secret, payment.id),
        attempt: newAttemptNonce(),
        canChangeMethod: payment.method === null && state.options.length > 1,
      };
      // The method of a charge under way (or just declined) stays chosen when the page is opened again.
      const ongoing = state.stage === 'open' ? undefined : state.latestAttempt?.method;
      const chosen =
        payment.method ?? view.method ?? ongoing ?? (state.options.length === 1 ? state.options[0]!.method : undefined);
      const option = state.options.find((candidate) => candidate.method === chosen);
      let body: string;
      let script: string | undefined;
      let waiting = false;
      let leaveTo: string | undefined;
      if (state.status === 'pending') {
        const notice =
          view.notice ??
          (state.shopMode === 'live' && state.stage === 'declined' ? statusCard(lang, 'declinedAtBank') : '');
        const shown = await pendingBody(state, form, option, view);
        waiting = shown.waiting;
        leaveTo = shown.leaveTo;
        body = summary(lang, state, option?.totalKopecks) + notice + shown.body;
        script = countdownScript(lang, payment.expires_at.getTime(), context.clock.now().getTime());
        if (leaveTo) script += toBankScript(leaveTo);
        if (waiting) {
          const next = new URLSearchParams({ lang });
          if (chosen && !payment.method) next.set('method', chosen);
          script += statusPollScript(
            payment.order_code,
            { status: 'pending', stage: state.stage },
            `/pay/${payment.order_code}?${next}`,
          );
        }
      } else {
        body =
          summary(lang, state, payment.paid_total_kopecks ?? undefined) +
          statusCard(lang, state.status as 'paid' | 'failed' | 'expired');
      }
      const switchParams = new URLSearchParams();
      if (view.method && !payment.method) switchParams.set('method', view.method);
      if (view.returned) switchParams.set('returned', '1');
      const switchPath = `/pay/${payment.order_code}${switchParams.size ? `?${switchParams}` : ''}`;
      const title = `${text(lang, 'title')} — ${state.shopName}`;
      const cookie = existingSecret ? undefined : pageCookie(secret, secureCookie);
      const noscriptRefresh = leaveTo
        ? { url: leaveTo, seconds: 0 }
        : waiting
          ? { url: checkAgainUrl(lang, payment.order_code), seconds: NOSCRIPT_REFRESH_SECONDS }
          : undefined;
      return sendPage(
        reply,
        200,
        waiting ? WAITING_PAGE_PERMISSIONS : PAYMENT_PAGE_PERMISSIONS,
        (nonce) => layout({ lang, title, body, nonce, switchPath, script, noscriptRefresh }),
        cookie,
      );
    }

    function redirectAfter(
      reply: FastifyReply,
      orderCode: string,
      lang: Lang,
      result: PayResult,
      method: PaymentMethod,
    ): FastifyReply {
      const params = new URLSearchParams({ lang });
      // On to the acquirer's own page (card data is entered there, never here), through
      // our page of the newest attempt: a form's redirect may not leave our origin (CSP
      // form-action); only an http(s) URL is ever followed.
      if (result.kind === 'redirect' && /^https?:\/\//.test(result.url)) {
        params.set('to_bank', '1');
      } else if (result.kind === 'declined') {
        params.set('method', method);
        params.set('declined', result.declineCode);
      } else if (result.kind === 'confirm') {
        params.set('confirm', result.chargeKey);
      } else if (result.kind === 'unavailable') {
        params.set('unavailable', '1');
      }
      return reply
        .code(303)
        .header('location', `/pay/${orderCode}?${params}`)
        .header('cache-control', 'no-store')
        .send();
    }

    /** Loads the payment of a POST and checks its CSRF token; answers the error page itself when refused. */
    async function actionState(request: FastifyRequest<{ Params: { order_code: string } }>, reply: FastifyReply) {
      const form = (request.body ?? {}) as Form;
      const lang = requestLang(request, form.lang);
      const state = await loadPageState(context, request.params.order_code);
      if (!state) {
        simplePage(reply, lang, 404, 'notFound', '/pay');
        return undefined;
      }
      if (!csrfTokenValid(pageSecretFrom(request.headers.cookie), state.payment.id, form.csrf)) {
        simplePage(reply, lang, 403, 'csrf', `/pay/${state.payment.order_code}`);
        return undefined;
      }
      return { form, lang, state };
    }

    // Any other path under /pay is a payer's mistyped or stale link: a page in their
    // language, not the API's JSON 404 (the router prefers every route above to these).
    for (const url of ['/pay', '/pay/*']) {
      app.route({
        method: ['GET', 'POST'],
        url,
        schema: { hide: true },
        handler: (request, reply) => simplePage(reply, requestLang(request), 404, 'notFound', '/pay'),
      });
    }

    app.get<{ Params: { order_code: string }; Querystring: Record<string, string | undefined> }>(
      '/pay/:order_code',
      { schema: { hide: true } },
      async (request, reply) => {
        const lang = requestLang(request);
        const state = await loadPageState(context, request.params.order_code);
        if (!state) return simplePage(reply, lang, 404, 'notFound', '/pay');
        const query = request.query;
        const method = query.method && isPaymentMethod(query.method) ? query.method : undefined;
        let notice: string | undefined;
        if (query.declined) notice = statusCard(lang, 'declined');
        else if (query.invalid) notice = `<div class="notice error" role="alert">${text(lang, 'invalidCard')}</div>`;
        else if (query.unavailable) notice = statusCard(lang, 'unavailable');
        const chargeKey =
          query.confirm && query.confirm.startsWith(`${state.payment.id}:`) && query.confirm.length < 120
            ? query.confirm
            : undefined;
        return renderPage(request, reply, state, lang, {
          method,
          notice,
          chargeKey,
          returned: query.returned === '1',
          toBank: query.to_bank === '1',
        });
      },
    );

    // Back from the acquirer's page: the state comes from our database (and one look-up), never from the query string.
    app.get<{ Params: { order_code: string } }>(
      '/pay/:order_code/return',
      { schema: { hide: true }, config: actionLimit },
      async (request, reply) => {
        const lang = requestLang(request);
        const state = await loadPageState(context, request.params.order_code);
        if (!state) return simplePage(reply, lang, 404, 'notFound', '/pay');
        await refreshOnReturn(context, state);
        return reply
          .code(303)
          .header('location', `/pay/${state.payment.order_code}?${new URLSearchParams({ lang, returned: '1' })}`)
          .header('cache-control', 'no-store')
          .send();
      },
    );

    // What a waiting page's script polls: the payment's status and the payer's stage,
    // read from our database only (the acquirer is asked by /return, rate limited,
    // and by the reconciliation worker, never per poll). No merchant data.
    app.get<{ Params: { order_code: string } }>(STATUS_ROUTE, { schema: { hide: true } }, async (request, reply) => {
      const status = await loadPayerStatus(context, request.params.order_code);
      reply
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'same-origin');
      if (!status) return reply.code(404).send({ error: 'not_found', message: 'No payment has this order code.' });
      return status;
    });

    app.post<{ Params: { order_code: string } }>(
      '/pay/:order_code/card',
      { schema: { hide: true }, config: actionLimit },
      async (request, reply) => {
        const checked = await actionState(request, reply);
        if (!checked) return reply;
        const { form, lang, state } = checked;
        // A live shop's card is entered at the acquirer: whatever card fields a crafted form carries are never read.
        const card = state.shopMode === 'sandbox' ? parseCard(form) : undefined;
        if ((state.shopMode === 'sandbox' && !card) || !ATTEMPT_PATTERN.test(form.attempt ?? '')) {
          const params = new URLSearchParams({ lang, method: 'card', invalid: '1' });
          return reply.code(303).header('location', `/pay/${state.payment.order_code}?${params}`).send();
        }
        const result = await payFromPage(context, state, { method: 'card', attempt: form.attempt!, card });
        return redirectAfter(reply, state.payment.order_code, lang, result, 'card');
      },
    );

    app.post<{ Params: { order_code: string } }>(
      '/pay/:order_code/qr',
      { schema: { hide: true }, config: actionLimit },
      async (request, reply) => {
        const checked = await actionState(request, reply);
        if (!checked) return reply;
        const { form, lang, state } = checked;
        const method = form.method;
        if ((method !== 'sbp' && method !== 'sberpay') || !ATTEMPT_PATTERN.test(form.attempt ?? '')) {
          return redirectAfter(reply, state.payment.order_code, lang, { kind: 'unavailable' }, 'card');
        }
        const result = await payFromPage(context, state, { method, attempt: form.attempt! });
        return redirectAfter(reply, state.payment.order_code, lang, result, method);
      },
    );

    app.post<{ Params: { order_code: string } }>(
      '/pay/:order_code/confirm',
      { schema: { hide: true }, config: actionLimit },
      async (request, reply) => {
        const checked = await actionState(request, reply);
        if (!checked) return reply;
        const { form, lang, state } = checked;
        const result = await confirmFromPage(context, state, form.charge ?? '', form.decision === 'approve');
        return redirectAfter(reply, state.payment.order_code, lang, result, 'card');
      },
    );
  };
