// The hosted crypto invoice page at /pay/crypto/{invoice_id} (outside /v1: no
// API key; the invoice id is the capability, as the order code is for payments),
// and the small status JSON its script polls. Rate limited per IP; errors are a
// page in the payer's language, never API JSON.
import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { requestLang, type Lang } from '../../../hosted-pages/page-language.ts';
import { layout } from '../../../hosted-pages/page-layout.ts';
import { limitPageRequests, sendPage, type PagePermissions } from '../../../hosted-pages/page-reply.ts';
import { classify } from '../../../http/error-handler.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import { invoicePageBody, invoicePageScript, invoiceStatusCard } from './invoice-page-html.ts';
import { invoiceText } from './invoice-page-i18n.ts';
import { loadInvoicePage, loadInvoiceStatus } from './invoice-page-service.ts';

/** Above the payment page's 300: an open invoice page polls its status every 3 s. */
const PAGE_REQUESTS_PER_MINUTE_PER_IP = 600;
/** Ids are TypeIDs (inv_ + 26 characters); anything else cannot be an invoice. */
const INVOICE_ID_PATTERN = /^inv_[0-9a-z]{26}$/;
/** No forms; its script polls the status JSON on the same origin. */
const INVOICE_PAGE_PERMISSIONS: PagePermissions = { postsForms: false, fetchesOwnOrigin: true };

type PageStatus = 400 | 404 | 429 | 500;

export const invoicePageRoutes =
  (deps: CryptoDeps): FastifyPluginAsync =>
  async (app) => {
    await limitPageRequests(app, { name: 'crypto-page', perMinutePerIp: PAGE_REQUESTS_PER_MINUTE_PER_IP });

    function errorPage(reply: FastifyReply, lang: Lang, status: PageStatus, switchPath: string): FastifyReply {
      const kind =
        status === 400 ? 'badRequest' : status === 404 ? 'notFound' : status === 429 ? 'tooMany' : 'internal';
      return sendPage(reply, status, INVOICE_PAGE_PERMISSIONS, (nonce) =>
        layout({ lang, title: invoiceText(lang, 'title'), body: invoiceStatusCard(lang, kind), nonce, switchPath }),
      );
    }

    app.setErrorHandler((error: FastifyError, request, reply) => {
      const { status, body, headers, unexpected } = classify(error);
      if (unexpected) request.log.error({ err: error }, 'unexpected error on the crypto invoice page');
      // Bad input (a NUL in the path, say) is the payer's link, not our fault: 400, never 500.
      const pageStatus: PageStatus = status === 429 ? 429 : status === 404 ? 404 : status < 500 ? 400 : 500;
      // The status JSON its script polls answers in the API's error shape.
      if (request.url.includes('/status'))
        return reply
          .code(status)
          .headers(headers)
          .send({ ...body, request_id: request.id });
      return errorPage(reply.headers(headers), requestLang(request), pageStatus, '/pay/crypto');
    });

    app.get<{ Params: { invoice_id: string } }>(
      '/pay/crypto/:invoice_id',
      { schema: { hide: true } },
      async (request, reply) => {
        const lang = requestLang(request);
        const invoiceId = request.params.invoice_id;
        const page = INVOICE_ID_PATTERN.test(invoiceId) ? await loadInvoicePage(deps, invoiceId) : undefined;
        if (!page) return errorPage(reply, lang, 404, '/pay/crypto');
        return sendPage(reply, 200, INVOICE_PAGE_PERMISSIONS, (nonce) =>
          layout({
            lang,
            title: `${invoiceText(lang, 'title')} — ${page.shopName}`,
            body: invoicePageBody(lang, page, nonce),
            nonce,
            switchPath: `/pay/crypto/${invoiceId}`,
            script: invoicePageScript(lang, page, deps.clock.now().getTime()),
          }),
        );
      },
    );

    // What the page's script polls: only what the page shows, nothing more.
    app.get<{ Params: { invoice_id: string } }>(
      '/pay/crypto/:invoice_id/status',
      { schema: { hide: true } },
      async (request, reply) => {
        const status = INVOICE_ID_PATTERN.test(request.params.invoice_id)
          ? await loadInvoiceStatus(deps, request.params.invoice_id)
          : undefined;
        reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
        if (!status) return reply.code(404).send({ error: 'not_found' });
        return status;
      },
    );
  };
