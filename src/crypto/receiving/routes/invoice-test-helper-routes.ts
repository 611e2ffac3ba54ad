// /v1/test_helpers/crypto/invoices/{invoice_id}/expire: a sandbox shop's invoice
// reaches its expires_at now, as the clock would make it, instead of after its
// lifetime (300 s at the least). On a live shop the route answers 404.
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { NotFoundError } from '../../../errors.ts';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import { expireInvoiceNow } from '../invoice-expiry.ts';
import { Invoice, InvoiceParams } from './crypto-schemas.ts';

export const invoiceTestHelperRoutes =
  (deps: CryptoDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/test_helpers/crypto/invoices/:invoice_id/expire',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'testHelpersCryptoExpireInvoice',
          tags: ['test helpers'],
          summary: 'Sandbox: expire an invoice now',
          description:
            'Only for invoices of a sandbox shop; on a live shop the route answers 404. A pending invoice becomes `expired`, a confirming one with part of its amount final becomes `underpaid`, with their `crypto.invoice.updated`, as when its `expires_at` passes; its `expires_at` becomes now, so a later deposit is a late payment. An invoice already closed, or with a deposit still confirming (mine blocks until it is final), answers 409 invalid_state.',
          params: InvoiceParams,
          response: {
            200: { ...Invoice, description: 'The invoice, closed' },
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'not_found',
              'invalid_state',
            ),
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        if (principal.shopMode !== 'sandbox') throw new NotFoundError('Test helpers exist for sandbox shops only.');
        return expireInvoiceNow(deps.db, deps.clock, principal.shopId, request.params.invoice_id);
      },
    );
  };
