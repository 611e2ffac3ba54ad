// Crypto receiving in the cabinet: the tables of a shop's crypto invoices,
// static wallets, deposits and refunds (listing.ts), each object's own page
// with its facts and timeline, blocking and unblocking a wallet (wallets.manage,
// through the receiving module's service, audited there), and a refund of a
// deposit or an invoice's credited deposits (refunds.create): a preview of the
// network fee first, then the refund through the refunds module's service with
// the API's rules, audited as `refund.requested` in the refund's transaction.
// A per-form external_id (a hidden field) makes a double submit one refund.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { depositRecordOfShop, invoiceWithDeposits } from '../../crypto/receiving/receiving-browsing.ts';
import { blockWallet, getWallet, unblockWallet } from '../../crypto/receiving/wallet-service.ts';
import { createRefund, getRefund, previewRefund, refundsAbout } from '../../crypto/refunds/refund-service.ts';
import { AppError } from '../../errors.ts';
import { HTTP_STATUS_BY_CODE } from '../../http/error-handler.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import { actorOf, cabinetOf, merchantOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { installListing } from '../listings/listing-routes.ts';
import { roleCan, type Permission } from '../roles.ts';
import type { Lang } from '../views/cabinet-language.ts';
import {
  depositListing,
  invoiceListing,
  receivingText as text,
  refundListing,
  walletListing,
} from './receiving-listings.ts';
import {
  DepositPage,
  InvoicePage,
  RefundFormPage,
  RefundPage,
  WalletPage,
  historyOf,
  type RefundSubject,
} from './receiving-pages.ts';

function access(permission: Permission, money = false) {
  return { schema: { hide: true }, config: { cabinet: { access: { permission, money } } } };
}

const READ = access('payments.read');
const MANAGE_WALLETS = access('wallets.manage', true);
// Money to any typed address: the second factor given lately, as for a payout.
const REFUND = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'refunds.create' as const, money: true, stepUp: true } } },
};

const ADDRESS_MAX_LENGTH = 100;
const EXTERNAL_ID_MAX_LENGTH = 100;

function param(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name] ?? '';
}

function field(request: FastifyRequest, name: string, maxLength: number): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim().slice(0, maxLength) : '';
}

function can(request: FastifyRequest, permission: Permission): boolean {
  const { role } = cabinetOf(request);
  return role !== undefined && roleCan(role, permission);
}

function csrfOf(request: FastifyRequest): string {
  return cabinetOf(request).session?.csrf_token ?? '';
}

function shopBase(shop: ShopProfile): string {
  return `/cabinet/shops/${shop.shopId}`;
}

/** A fresh external_id for one refund form: submitting it twice asks for the same refund. */
function formExternalId(): string {
  return `cabinet-${randomUUID()}`;
}

export function receivingRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    installListing(app, deps, http, invoiceListing(deps));
    installListing(app, deps, http, walletListing(deps));
    installListing(app, deps, http, depositListing(deps));
    installListing(app, deps, http, refundListing(deps));

    app.get('/cabinet/shops/:shopId/invoices/:invoiceId', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const { invoice, deposits } = await invoiceWithDeposits(deps, shop.shopId, param(request, 'invoiceId'));
      const refunds = await refundsAbout(deps, { invoiceId: invoice.invoice_id });
      const history = await historyOf(deps, shop, lang, {
        subjectIds: [invoice.invoice_id, ...deposits.map((deposit) => deposit.deposit_id)],
        ledger: deposits.map((deposit) => ['deposit', deposit.deposit_id] as const),
      });
      const refundable = deposits.some((deposit) => deposit.status === 'credited');
      return sendPage(request, reply, http, {
        title: `${text(lang, 'invoice')} ${invoice.invoice_id} · ${shop.name}`,
        children: InvoicePage({
          lang,
          config: deps.config,
          shop,
          invoice,
          deposits,
          refunds,
          history,
          now: deps.clock.now(),
          refundForm:
            refundable && can(request, 'refunds.create')
              ? { csrf: csrfOf(request), externalId: formExternalId() }
              : undefined,
        }),
      });
    });

    app.get('/cabinet/shops/:shopId/deposits/:depositId', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const deposit = await depositRecordOfShop(deps, shop.shopId, param(request, 'depositId'));
      const refunds = await refundsAbout(deps, { depositId: deposit.deposit_id });
      const history = await historyOf(deps, shop, lang, {
        subjectIds: [deposit.deposit_id],
        ledger: [['deposit', deposit.deposit_id]],
      });
      const refundable =
        (deposit.status === 'credited' || deposit.status === 'held') &&
        !refunds.some((refund) => refund.status !== 'failed');
      return sendPage(request, reply, http, {
        title: `${text(lang, 'deposit')} ${deposit.deposit_id} · ${shop.name}`,
        children: DepositPage({
          lang,
          config: deps.config,
          shop,
          deposit,
          refunds,
          history,
          refundForm:
            refundable && can(request, 'refunds.create')
              ? { csrf: csrfOf(request), externalId: formExternalId() }
              : undefined,
        }),
      });
    });

    app.get('/cabinet/shops/:shopId/wallets/:walletId', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const wallet = await getWallet(deps, shop.shopId, param(request, 'walletId'));
      const history = await historyOf(deps, shop, lang, { subjectIds: [wallet.wallet_id], ledger: [] });
      const done = (request.query as Record<string, unknown>).done;
      const notice =
        done === 'blocked' || done === 'unblocked'
          ? { kind: 'ok' as const, text: text(lang, `${done}_notice`) }
          : undefined;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'wallet')} ${wallet.wallet_id} · ${shop.name}`,
        notice,
        children: WalletPage({
          lang,
          config: deps.config,
          shop,
          wallet,
          history,
          manage: can(request, 'wallets.manage') ? csrfOf(request) : undefined,
        }),
      });
    });

    app.get('/cabinet/shops/:shopId/refunds/:refundId', READ, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const refund = await getRefund(deps, shop.shopId, param(request, 'refundId'));
      const history = await historyOf(deps, shop, lang, {
        subjectIds: [refund.refund_id],
        ledger: [['refund', refund.refund_id]],
      });
      const requested = (request.query as Record<string, unknown>).done === 'requested';
      return sendPage(request, reply, http, {
        title: `${text(lang, 'refund')} ${refund.refund_id} · ${shop.name}`,
        notice: requested ? { kind: 'ok', text: text(lang, 'refund_requested_notice') } : undefined,
        children: RefundPage({ lang, config: deps.config, shop, refund, history }),
      });
    });

    for (const [action, change] of [
      ['block', blockWallet],
      ['unblock', unblockWallet],
    ] as const) {
      app.post(`/cabinet/shops/:shopId/wallets/:walletId/${action}`, MANAGE_WALLETS, async (request, reply) => {
        const shop = shopOf(request);
        const { merchantId } = merchantOf(request);
        const wallet = await change(deps, shop.shopId, param(request, 'walletId'), {
          actor: actorOf(request),
          merchantId,
        });
        return redirectTo(reply, `${shopBase(shop)}/wallets/${wallet.wallet_id}?done=${action}ed`);
      });
    }

    for (const kind of ['deposit', 'invoice'] as const) {
      const path = `/cabinet/shops/:shopId/${kind}s/:${kind}Id/refund`;
      app.post(`${path}/preview`, REFUND, async (request, reply) => refundStep(request, reply, kind, 'preview'));
      app.post(path, REFUND, async (request, reply) => refundStep(request, reply, kind, 'create'));
    }
  };

  async function refundStep(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: RefundSubject['kind'],
    step: 'preview' | 'create',
  ) {
    const { lang } = cabinetOf(request);
    const shop = shopOf(request);
    const subject: RefundSubject = { kind, id: param(request, `${kind}Id`) };
    // The subject must be the shop's before anything else is said of it: another shop's is 404.
    if (kind === 'deposit') await depositRecordOfShop(deps, shop.shopId, subject.id);
    else await invoiceWithDeposits(deps, shop.shopId, subject.id);
    const address = field(request, 'address', ADDRESS_MAX_LENGTH);
    const externalId = field(request, 'external_id', EXTERNAL_ID_MAX_LENGTH) || formExternalId();
    const target = { [`${kind}_id`]: subject.id, address };
    const form = { csrf: csrfOf(request), externalId, address };
    const page = (
      status: number,
      content: Omit<Parameters<typeof RefundFormPage>[0], 'lang' | 'shop' | 'subject' | 'form'>,
    ) =>
      sendPage(request, reply, http, {
        status,
        title: `${text(lang, 'refund_title')} · ${shop.name}`,
        notice: content.error ? { kind: 'error', text: content.error } : undefined,
        children: RefundFormPage({ lang, shop, subject, form, ...content }),
      });
    try {
      if (step === 'preview') return page(200, { quote: await previewRefund(deps, shop, target) });
      const { refund } = await createRefund(
        deps,
        shop,
        { ...target, external_id: externalId },
        { actor: actorOf(request) },
      );
      return redirectTo(reply, `${shopBase(shop)}/refunds/${refund.refund_id}?done=requested`);
    } catch (error) {
      // A refusal by the refund's rules is said on the form; anything else is the cabinet's error page.
      const status = error instanceof AppError ? HTTP_STATUS_BY_CODE[error.code] : 500;
      if (!(error instanceof AppError) || status >= 500 || error.code === 'not_found') throw error;
      return page(status, { error: refusalText(lang, error) });
    }
  }
}

function refusalText(lang: Lang, error: AppError): string {
  if (error.code === 'already_refunded') return text(lang, 'refund_already');
  return `${text(lang, 'refund_refused')} ${error.message}`;
}
