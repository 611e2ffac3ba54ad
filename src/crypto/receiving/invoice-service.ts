// Crypto invoices: creation (validation, a fresh deposit address, idempotency
// by external_id), reads, and the QR code of the payment URI. The watcher moves
// them through their states (invoice-settlement.ts).
import QRCode from 'qrcode';
import {
  createAtomicallyWith,
  priorResource,
  RECORD_KEY_CONSTRAINT,
  type IdempotencyRule,
  type Prior,
  keyedRequest,
} from '../../idempotency/idempotency-service.ts';
import { isUniqueViolation, type Executor } from '../../db/transaction.ts';
import { InvalidRequestError, NotFoundError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { parseMinor } from '../../money/decimal.ts';
import type { ShopMode } from '../../merchants/merchant-service.ts';
import { webhookUrlProblem, type WebhookUrlRules } from '../../webhooks/url-guard.ts';
import { reserveDepositAddress } from './address-allocation.ts';
import type { AddressPoolDeps } from './address-pool.ts';
import type { CryptoDeps } from '../chain/chain-module.ts';
import { createdAtOrder, parseStatusFilter, readListPage, type ListPage, type ListQuery } from '../../db/list-page.ts';
import * as repository from './receiving-repository.ts';
import { INVOICE_STATUSES } from './receiving-tables.ts';
import { invoiceView, type InvoiceView } from './receiving-views.ts';

export type { InvoiceView } from './receiving-views.ts';
const SUPPORTED_NETWORKS = ['TRC20'] as const;
export const EXTERNAL_ID_MAX_LENGTH = 100;
export const CALLBACK_URL_MAX_LENGTH = 2048;
export const LIFETIME_MIN_S = 300;
export const LIFETIME_MAX_S = 43_200;
export const LIFETIME_DEFAULT_S = 3_600;
/** 10^9 USDT in micro-USDT. */
const AMOUNT_MAX_MICRO = 1_000_000_000_000_000n;

export interface CryptoShop {
  readonly shopId: string;
  readonly mode: ShopMode;
}

export interface CreateInvoiceRequest {
  readonly external_id: string;
  readonly amount: string;
  readonly network: string;
  readonly lifetime_s?: number | undefined;
  readonly callback_url?: string | null | undefined;
}

/** The invoices' own unique (shop, external_id): a concurrent duplicate may reach it before the idempotency record's key. */
const INVOICE_EXTERNAL_ID_CONSTRAINT = 'crypto_invoices_shop_id_external_id_key';

const INVOICE_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'crypto.invoice.create',
  windowMs: null,
  replay: 'current-resource',
  conflictMessage:
    'An invoice with this external_id already exists with other parameters; use a new external_id for a new invoice.',
};

/** A USDT amount of a request: a decimal string, > 0, at most 6 places and 10^9. */
export function parseUsdtAmount(value: unknown, field: string): bigint {
  if (typeof value !== 'string')
    throw new InvalidRequestError(`${field} must be a decimal string such as "10.5" (a JSON string, not a number).`);
  const parsed = parseMinor(value, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new InvalidRequestError(`${field} ${parsed.problem}.`);
  if (parsed.minor <= 0n) throw new InvalidRequestError(`${field} must be greater than 0.`);
  if (parsed.minor > AMOUNT_MAX_MICRO) throw new InvalidRequestError(`${field} must be at most 1000000000.`);
  return parsed.minor;
}

export function parseNetwork(value: unknown): 'TRC20' {
  if (value !== 'TRC20') {
    throw new InvalidRequestError(
      `network ${JSON.stringify(String(value).slice(0, 32))} is not supported; supported networks: ${SUPPORTED_NETWORKS.join(', ')}.`,
    );
  }
  return value;
}

export function parseTextId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > EXTERNAL_ID_MAX_LENGTH) {
    throw new InvalidRequestError(`${field} must be a string of 1 to ${EXTERNAL_ID_MAX_LENGTH} characters.`);
  }
  return value;
}

interface ValidInvoiceRequest {
  readonly externalId: string;
  readonly amountMicro: bigint;
  readonly network: 'TRC20';
  readonly lifetimeS: number;
  readonly callbackUrl: string | null;
}

function validateInvoiceRequest(request: CreateInvoiceRequest, rules: WebhookUrlRules): ValidInvoiceRequest {
  const externalId = parseTextId(request.external_id, 'external_id');
  const amountMicro = parseUsdtAmount(request.amount, 'amount');
  const network = parseNetwork(request.network);
  const lifetimeS = request.lifetime_s ?? LIFETIME_DEFAULT_S;
  if (!Number.isInteger(lifetimeS) || lifetimeS < LIFETIME_MIN_S || lifetimeS > LIFETIME_MAX_S) {
    throw new InvalidRequestError(
      `lifetime_s must be a whole number of seconds from ${LIFETIME_MIN_S} to ${LIFETIME_MAX_S}.`,
    );
  }
  const callbackUrl = request.callback_url ?? null;
  if (callbackUrl !== null) {
    const problem =
      typeof callbackUrl !== 'string'
        ? 'must be a string'
        : callbackUrl.length > CALLBACK_URL_MAX_LENGTH
          ? `must be at most ${CALLBACK_URL_MAX_LENGTH} characters`
          : webhookUrlProblem(callbackUrl, rules);
    if (problem)
      throw new InvalidRequestError(
        `callback_url ${problem}; send an absolute URL (https, or http where allowed) of a public host.`,
      );
  }
  return { externalId, amountMicro, network, lifetimeS, callbackUrl };
}

/**
 * POST /v1/crypto/invoices. The same external_id with the same parameters is the
 * same invoice (created: false); with other parameters, 409 duplicate_external_id.
 */
export async function createInvoice(
  deps: CryptoDeps & AddressPoolDeps,
  shop: CryptoShop,
  request: CreateInvoiceRequest,
): Promise<{ created: boolean; invoice: InvoiceView }> {
  const valid = validateInvoiceRequest(request, deps.config);
  const keyed = keyedRequest(shop.shopId, valid.externalId, {
    amount_micro: valid.amountMicro.toString(),
    network: valid.network,
    lifetime_s: valid.lifetimeS,
    callback_url: valid.callbackUrl,
  });
  // Outside any transaction: the first use may load keys and start the sandbox chain.
  const access = await deps.chain.forMode(shop.mode);
  const now = deps.clock.now();
  const invoice = {
    id: newId('invoice'),
    shop_id: shop.shopId,
    external_id: valid.externalId,
    network: valid.network,
    network_mode: access.networkMode,
    amount_micro: valid.amountMicro,
    status: 'pending' as const,
    lifetime_s: valid.lifetimeS,
    callback_url: valid.callbackUrl,
    expires_at: new Date(now.getTime() + valid.lifetimeS * 1000),
    paid_at: null,
    created_at: now,
    updated_at: now,
  };
  // One statement: the address record, the invoice, the idempotency record.
  const outcome = await createAtomicallyWith(
    deps.db,
    deps.clock,
    INVOICE_IDEMPOTENCY_RULE,
    keyed,
    { resourceId: invoice.id },
    async (record) => {
      const reserved = await reserveDepositAddress(deps.db, deps.clock, access, deps.addressPool);
      try {
        return await repository.insertInvoiceWithAddress(
          deps.db,
          { keyId: access.keyId, ...reserved },
          invoice,
          record,
        );
      } catch (error) {
        // A duplicate's statement wrote nothing: its address is still fresh for the next invoice.
        if (isUniqueViolation(error, RECORD_KEY_CONSTRAINT) || isUniqueViolation(error, INVOICE_EXTERNAL_ID_CONSTRAINT))
          deps.addressPool.giveBack(access, { keyId: access.keyId, ...reserved });
        throw error;
      }
    },
    [INVOICE_EXTERNAL_ID_CONSTRAINT],
  );
  if (outcome.kind === 'created') return { created: true, invoice: invoiceView(outcome.value) };
  return { created: false, invoice: await priorInvoice(deps.db, shop.shopId, outcome) };
}

async function priorInvoice(db: Executor, shopId: string, prior: Prior): Promise<InvoiceView> {
  return invoiceView(await priorResource(prior, 'invoice', (id) => repository.findInvoiceOfShop(db, shopId, id)));
}

async function invoiceRowOfShop(deps: CryptoDeps, shopId: string, invoiceId: string): Promise<repository.InvoiceRow> {
  const row =
    invoiceId.startsWith('inv_') && invoiceId.length <= 100
      ? await repository.findInvoiceOfShop(deps.db, shopId, invoiceId)
      : undefined;
  if (!row) throw new NotFoundError('No such invoice.');
  return row;
}

/** An invoice of the shop; another shop's, or an unknown id, is 404. */
export async function getInvoice(deps: CryptoDeps, shopId: string, invoiceId: string): Promise<InvoiceView> {
  return invoiceView(await invoiceRowOfShop(deps, shopId, invoiceId));
}

const INVOICE_LIST_ORDER = createdAtOrder((id) => id.startsWith('inv_'));

export interface ListInvoicesInput extends ListQuery {
  readonly status?: string | undefined;
  readonly external_id?: string | undefined;
}

export async function listInvoices(
  deps: CryptoDeps,
  shopId: string,
  input: ListInvoicesInput,
): Promise<ListPage<InvoiceView>> {
  const status = parseStatusFilter(input.status, INVOICE_STATUSES);
  return readListPage(
    input,
    INVOICE_LIST_ORDER,
    (window) => repository.listInvoices(deps.db, { shopId, status, externalId: input.external_id, ...window }),
    (rows) => rows.map(invoiceView),
  );
}

/** The QR code (SVG) of the invoice's payment URI, for wallets that scan. */
export async function invoiceQrSvg(deps: CryptoDeps, shopId: string, invoiceId: string): Promise<string> {
  const invoice = invoiceView(await invoiceRowOfShop(deps, shopId, invoiceId));
  return QRCode.toString(invoice.payment_uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
