// /v1/crypto/invoices: create (idempotent by external_id), read, list, and the
// QR code of the payment URI. Thin: schema, scope, call invoice-service.
import { Type } from 'typebox';
import { principalOf } from '../../../http/authentication.ts';
import { AUTHENTICATED_ROUTE_ERRORS, REQUEST_BODY_ERRORS, errorResponses } from '../../../http/error-responses.ts';
import { createInvoice, getInvoice, invoiceQrSvg, listInvoices } from '../invoice-service.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import type { AddressPoolDeps } from '../address-pool.ts';
import type { ModuleRoutes } from '../../../gateway-module.ts';
import {
  AmountInput,
  CALLBACK_URL_MAX_LENGTH,
  EXTERNAL_ID_MAX_LENGTH,
  INVOICE_EXAMPLE,
  Invoice,
  InvoiceParams,
  InvoiceStatus,
  LIFETIME_DEFAULT_S,
  LIFETIME_MAX_S,
  LIFETIME_MIN_S,
  NetworkInput,
  PageQuery,
  pageOf,
} from './crypto-schemas.ts';
import { listRouteOptions, pageRequest } from '../../../http/page-request.ts';

const CreateInvoiceBody = Type.Object(
  {
    external_id: Type.String({
      minLength: 1,
      maxLength: EXTERNAL_ID_MAX_LENGTH,
      description: 'your id of the invoice (1 to 100 characters); the idempotency key',
    }),
    amount: AmountInput,
    network: NetworkInput,
    lifetime_s: Type.Optional(
      Type.Integer({
        minimum: LIFETIME_MIN_S,
        maximum: LIFETIME_MAX_S,
        description: `seconds until the invoice expires, ${LIFETIME_MIN_S} to ${LIFETIME_MAX_S}; ${LIFETIME_DEFAULT_S} when absent`,
      }),
    ),
    callback_url: Type.Optional(
      Type.Union([Type.String({ maxLength: CALLBACK_URL_MAX_LENGTH }), Type.Null()], {
        description: 'also receives this invoice’s crypto.invoice.updated webhooks; https, a public address',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        external_id: 'order-42',
        amount: '25.5',
        network: 'TRC20',
        lifetime_s: 3600,
        callback_url: 'https://shop.example.com/paygate/crypto',
      },
    ],
  },
);

const ListInvoicesQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(InvoiceStatus),
    external_id: Type.Optional(Type.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX_LENGTH })),
  },
  { additionalProperties: false },
);

const QrSvg = {
  description: 'An SVG image of the QR code of payment_uri',
  content: {
    'image/svg+xml': {
      schema: Type.String({ description: 'SVG document' }),
      example:
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 41 41" shape-rendering="crispEdges"><path fill="#fff" d="M0 0h41v41H0z"/><path stroke="#000" d="M4 4.5h7m1 0h1…"/></svg>',
    },
  },
};

export const invoiceRoutes =
  (deps: CryptoDeps & AddressPoolDeps): ModuleRoutes =>
  async (app) => {
    app.post(
      '/crypto/invoices',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'createCryptoInvoice',
          tags: ['crypto invoices'],
          summary: 'Create a USDT invoice with a fresh deposit address (idempotent by external_id)',
          body: CreateInvoiceBody,
          response: {
            200: {
              ...Invoice,
              description: 'The invoice created earlier with this external_id and the same parameters',
            },
            201: { ...Invoice, description: 'The invoice, created now' },
            ...errorResponses(
              ...AUTHENTICATED_ROUTE_ERRORS,
              'forbidden',
              ...REQUEST_BODY_ERRORS,
              'duplicate_external_id',
            ),
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const result = await createInvoice(deps, { shopId: principal.shopId, mode: principal.shopMode }, request.body);
        return reply.code(result.created ? 201 : 200).send(result.invoice);
      },
    );

    app.get(
      '/crypto/invoices/:invoice_id',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'getCryptoInvoice',
          tags: ['crypto invoices'],
          summary: 'Get an invoice',
          params: InvoiceParams,
          response: { 200: Invoice, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'not_found') },
        },
      },
      async (request) => getInvoice(deps, principalOf(request).shopId, request.params.invoice_id),
    );

    app.get(
      '/crypto/invoices',
      listRouteOptions({
        scopes: ['crypto'],
        operationId: 'listCryptoInvoices',
        tag: 'crypto invoices',
        summary: 'List invoices, newest first',
        querystring: ListInvoicesQuery,
        page: pageOf(Invoice, 'invoices', INVOICE_EXAMPLE),
      }),
      async (request) =>
        listInvoices(deps, principalOf(request).shopId, {
          ...pageRequest(request.query),
          status: request.query.status,
          external_id: request.query.external_id,
        }),
    );

    app.get(
      '/crypto/invoices/:invoice_id/qr.svg',
      {
        config: { scopes: ['crypto'] },
        schema: {
          operationId: 'getCryptoInvoiceQr',
          tags: ['crypto invoices'],
          summary: 'The QR code of an invoice’s payment URI, as SVG',
          params: InvoiceParams,
          response: { 200: QrSvg, ...errorResponses(...AUTHENTICATED_ROUTE_ERRORS, 'forbidden', 'not_found') },
        },
      },
      async (request, reply) => {
        const svg = await invoiceQrSvg(deps, principalOf(request).shopId, request.params.invoice_id);
        return reply.type('image/svg+xml; charset=utf-8').header('cache-control', 'private, max-age=300').send(svg);
      },
    );
  };
