// Refunds of deposits (API.md "Crypto receiving: refunds"; docs/refunds-and-withdrawals.md):
// what one deposit, or an invoice's credited deposits, brought is sent back to
// an address minus the network fee, through the sign-once executor (purpose
// `refund`). Created idempotently by external_id; the refund row, the deposits
// it takes (a unique index: each deposit at most once), the ledger reservation
// and the queued outgoing transfer commit in one transaction. The network fee is
// quoted on the energy source, as a payout's (payouts/energy-quotes.ts): own
// energy is reserved for the refund's transfer when it covers it whole.
import { recordAudit, type AuditActor } from '../../audit/audit-service.ts';
import {
  createdAtOrder,
  parseStatusFilter,
  readListPage,
  type ListPage,
  type ListQuery,
  type ListRange,
} from '../../db/list-page.ts';
import { isUniqueViolation, type Db, type Executor, type Tx } from '../../db/transaction.ts';
import {
  AlreadyRefundedError,
  AmountNotSupportedError,
  InvalidRequestError,
  InvalidStateError,
  NotFoundError,
} from '../../errors.ts';
import {
  createUnderKey,
  priorOutcome,
  priorResource,
  type Created,
  type IdempotencyRule,
  type KeyedCreation,
  type Prior,
  keyedRequest,
} from '../../idempotency/idempotency-service.ts';
import { newId } from '../../ids.ts';
import type { ShopMode } from '../../merchants/merchant-service.ts';
import type { ChainAccess } from '../chain/crypto-chain.ts';
import { createOnEnergyQuotes, previewEnergyQuotes } from '../payouts/energy-quotes.ts';
import { quotePayouts, type PayoutQuote } from '../payouts/payout-fees.ts';
import {
  checkRecipients,
  parseExternalId,
  parseRecipient,
  type HotWalletSenderDeps,
} from '../payouts/payout-service.ts';
import { DEFAULT_PAYOUT_SETTINGS, type PayoutSettings } from '../payouts/payout-settings.ts';
import { creditedDepositsOfInvoice, depositOfShop, isInvoiceOfShop } from '../receiving/receiving-service.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import type { TronAddress } from '../tron/address.ts';
import { enqueueOutgoingTransfers } from '../sending/outgoing-transfers.ts';
import { noOutcomeYet } from '../sending/reserved-transfer.ts';
import { reserveRefund } from './refund-ledger.ts';
import * as repository from './refunds-repository.ts';
import { emitRefundUpdated, refundView, type RefundView } from './refunds-views.ts';
import type { RefundStatus } from './refunds-tables.ts';

export type RefundDeps = HotWalletSenderDeps;

export interface RefundShop {
  readonly shopId: string;
  readonly merchantId: string;
  readonly mode: ShopMode;
}

export interface CreateRefundRequest {
  readonly external_id: string;
  readonly deposit_id?: string | undefined;
  readonly invoice_id?: string | undefined;
  readonly address: string;
}

const REFUND_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'crypto.refund.create',
  windowMs: null,
  replay: 'current-resource',
  conflictMessage:
    'A refund with this external_id already exists with other parameters; use a new external_id for a new refund.',
};

/** A refund pays the network fee only: the payout tariff's service fee does not apply. */
const NO_SERVICE_FEE: PayoutSettings = { ...DEFAULT_PAYOUT_SETTINGS, serviceFeeFixedMicro: 0n, serviceFeeBps: 0 };

type Target = { readonly kind: 'deposit'; readonly id: string } | { readonly kind: 'invoice'; readonly id: string };

function parseTarget(request: Pick<CreateRefundRequest, 'deposit_id' | 'invoice_id'>): Target {
  const hasDeposit = request.deposit_id !== undefined && request.deposit_id !== null;
  const hasInvoice = request.invoice_id !== undefined && request.invoice_id !== null;
  if (hasDeposit === hasInvoice) throw new InvalidRequestError('Give exactly one of deposit_id and invoice_id.');
  const id = (hasDeposit ? request.deposit_id : request.invoice_id) as unknown;
  const field = hasDeposit ? 'deposit_id' : 'invoice_id';
  if (typeof id !== 'string' || id.length < 1 || id.length > 64)
    throw new InvalidRequestError(`${field} must be a string of 1 to 64 characters.`);
  return hasDeposit ? { kind: 'deposit', id } : { kind: 'invoice', id };
}

/** The deposits the refund sends back: final ones of this shop, none refunded yet. */
async function depositsToRefund(db: Db | Tx, shopId: string, target: Target): Promise<repository.RefundableDeposit[]> {
  let deposits: repository.RefundableDeposit[];
  if (target.kind === 'deposit') {
    const deposit = target.id.startsWith('dep_') ? await depositOfShop(db, shopId, target.id) : undefined;
    if (!deposit) throw new NotFoundError('No such deposit.');
    if (deposit.status !== 'credited' && deposit.status !== 'held') {
      throw new InvalidStateError(
        `Deposit ${deposit.id} is ${deposit.status}; only a final deposit (credited or held) can be refunded.`,
      );
    }
    deposits = [deposit];
  } else {
    const isInvoice = target.id.startsWith('inv_') && (await isInvoiceOfShop(db, shopId, target.id));
    if (!isInvoice) throw new NotFoundError('No such invoice.');
    deposits = await creditedDepositsOfInvoice(db, target.id);
    if (deposits.length === 0) throw new InvalidStateError(`Invoice ${target.id} has no credited deposit to refund.`);
  }
  const refunded = await repository.refundedDepositIds(
    db,
    deposits.map((deposit) => deposit.id),
  );
  const open = deposits.filter((deposit) => !refunded.has(deposit.id));
  if (open.length === 0)
    throw new AlreadyRefundedError(
      target.kind === 'deposit' ? undefined : 'Every credited deposit of this invoice has already been refunded.',
    );
  return open;
}

/** What a refund to `address` would send back, quoted as its creation quotes it (the cabinet's preview). */
export interface RefundQuote {
  readonly depositIds: readonly string[];
  readonly held: boolean;
  /** What the deposits brought. */
  readonly receivedMicro: bigint;
  readonly networkFeeMicro: bigint;
  /** What the address receives: received − network fee. */
  readonly amountMicro: bigint;
}

interface FullQuote extends RefundQuote {
  readonly deposits: readonly repository.RefundableDeposit[];
  readonly chain: repository.RefundRow['chain'];
  readonly networkMode: repository.RefundRow['network_mode'];
  readonly rateMicro: bigint;
}

/** What a refund's quote rests on before its energy is priced: the deposits, the chain, the burn-price quote. */
interface RefundBasis {
  readonly target: Target;
  readonly deposits: readonly repository.RefundableDeposit[];
  readonly access: ChainAccess;
  readonly burnQuote: PayoutQuote;
}

/** The rules of a refund before anything is written: the deposits it may take, the address, the fee at the burn price. */
async function refundBasis(
  deps: RefundDeps,
  shop: RefundShop,
  target: Target,
  address: TronAddress,
): Promise<RefundBasis> {
  const deposits = await depositsToRefund(deps.db, shop.shopId, target);
  const access = await deps.chain.forMode(shop.mode);
  await checkRecipients(deps.db, access, [{ address, field: 'address' }]);
  if (deposits.some((deposit) => deposit.chain !== access.chain))
    throw new InvalidStateError('The deposit arrived on another chain than this shop’s.');
  const depositsMicro = deposits.reduce((sum, deposit) => sum + deposit.amount_micro, 0n);
  const [burnQuote] = await quotePayouts(access, deps, NO_SERVICE_FEE, [{ address, amountMicro: depositsMicro }]);
  return { target, deposits, access, burnQuote: burnQuote! };
}

/** The refund on its quote priced by the energy source; deposits that do not cover the fee are refused. */
function refundQuoteOf(basis: RefundBasis, quote: PayoutQuote): FullQuote {
  const { deposits, access } = basis;
  const depositsMicro = quote.amountMicro;
  const networkFeeMicro = quote.networkFeeMicro;
  if (depositsMicro <= networkFeeMicro) {
    throw new AmountNotSupportedError(
      `The ${basis.target.kind}'s ${usdtText(depositsMicro)} USDT does not cover the network fee of ${usdtText(networkFeeMicro)} USDT to this address; nothing can be sent back.`,
    );
  }
  return {
    deposits,
    depositIds: deposits.map((deposit) => deposit.id).sort(),
    held: deposits[0]!.status === 'held',
    chain: access.chain,
    networkMode: access.networkMode,
    rateMicro: quote.rateMicro,
    receivedMicro: depositsMicro,
    networkFeeMicro,
    amountMicro: depositsMicro - networkFeeMicro,
  };
}

/**
 * What a refund of the deposit or the invoice to `address` would send back,
 * with the same rules and the same quote as its creation (own energy looked at,
 * not reserved); nothing is written.
 */
export async function previewRefund(
  deps: RefundDeps,
  shop: RefundShop,
  request: Omit<CreateRefundRequest, 'external_id'>,
): Promise<RefundQuote> {
  const target = parseTarget(request);
  const address = parseRecipient(request.address, 'address');
  const basis = await refundBasis(deps, shop, target, address);
  const [priced] = await previewEnergyQuotes(deps, basis.access, [basis.burnQuote]);
  const quote = refundQuoteOf(basis, priced!);
  return {
    depositIds: quote.depositIds,
    held: quote.held,
    receivedMicro: quote.receivedMicro,
    networkFeeMicro: quote.networkFeeMicro,
    amountMicro: quote.amountMicro,
  };
}

/** Who asked for a refund in the cabinet, for the audit log (`refund.requested`, in the refund's transaction). */
export interface RefundAudit {
  readonly actor: AuditActor;
}

/**
 * POST /v1/crypto/refunds. The same external_id with the same parameters is the
 * same refund (created: false, as it is now); other parameters: 409
 * duplicate_external_id. A deposit already refunded (or being refunded): 409
 * already_refunded, decided by the unique index when requests race.
 */
export async function createRefund(
  deps: RefundDeps,
  shop: RefundShop,
  request: CreateRefundRequest,
  audit?: RefundAudit,
): Promise<{ created: boolean; refund: RefundView }> {
  const externalId = parseExternalId(request.external_id, 'external_id');
  const target = parseTarget(request);
  const address = parseRecipient(request.address, 'address');
  const keyed = keyedRequest(shop.shopId, externalId, { [`${target.kind}_id`]: target.id, address });
  const creation: KeyedCreation<{ created: boolean; refund: RefundView }> = {
    rule: REFUND_IDEMPOTENCY_RULE,
    request: keyed,
    showPrior: async (tx, prior) => ({ created: false, refund: await priorRefund(tx, shop.shopId, prior) }),
  };
  const existing = await priorOutcome(deps.db, deps.clock, creation);
  if (existing) return existing;

  const basis = await refundBasis(deps, shop, target, address);
  // The refund's transfer id is named here: own energy is reserved for it before the refund is written.
  const transferId = newId('outgoingTransfer');
  try {
    return await createOnEnergyQuotes(deps, basis.access, [basis.burnQuote], [transferId], ([priced]) => {
      const quote = refundQuoteOf(basis, priced!);
      return createUnderKey(deps.db, deps.clock, creation, (tx, record) =>
        writeRefund(tx, deps, shop, { externalId, target, address, transferId, quote }, record, audit),
      );
    });
  } catch (error) {
    if (isUniqueViolation(error, repository.REFUND_ONCE_CONSTRAINT)) {
      throw new AlreadyRefundedError(
        target.kind === 'deposit' ? undefined : 'A deposit of this invoice has just been refunded by another request.',
      );
    }
    throw error;
  }
}

/** createRefund's writing, in its keyed transaction: the refund, its deposits, its queued transfer, its reservation. */
async function writeRefund(
  tx: Tx,
  deps: RefundDeps,
  shop: RefundShop,
  refund: {
    readonly externalId: string;
    readonly target: Target;
    readonly address: TronAddress;
    readonly transferId: string;
    readonly quote: FullQuote;
  },
  record: (created: Created) => Promise<void>,
  audit: RefundAudit | undefined,
): Promise<{ created: boolean; refund: RefundView }> {
  const { externalId, target, address, quote } = refund;
  const id = newId('refund');
  await record({ resourceId: id });
  const [transfer] = await enqueueOutgoingTransfers(
    tx,
    deps.clock,
    [
      {
        chain: quote.chain,
        purpose: 'refund',
        ownerId: id,
        asset: 'USDT',
        from: { kind: 'hot_wallet' },
        to: address,
        amount: quote.amountMicro,
      },
    ],
    [refund.transferId],
  );
  const now = deps.clock.now();
  const row = await repository.insertRefund(
    tx,
    {
      id,
      shop_id: shop.shopId,
      external_id: externalId,
      deposit_id: target.kind === 'deposit' ? target.id : null,
      invoice_id: target.kind === 'invoice' ? target.id : null,
      held: quote.held,
      network: 'TRC20',
      chain: quote.chain,
      network_mode: quote.networkMode,
      recipient_address: address,
      deposits_micro: quote.receivedMicro,
      amount_micro: quote.amountMicro,
      network_fee_micro: quote.networkFeeMicro,
      trx_usdt_rate_micro: quote.rateMicro,
      status: 'pending',
      outgoing_transfer_id: transfer!.id,
      ...noOutcomeYet(now),
    },
    quote.deposits,
  );
  await reserveRefund(tx, deps.clock, { book: shop.mode, merchantId: shop.merchantId }, row);
  const depositIds = [...quote.depositIds];
  await emitRefundUpdated(tx, deps.clock, row, depositIds);
  if (audit)
    await recordAudit(tx, deps.clock, {
      actor: audit.actor,
      action: 'refund.requested',
      merchantId: shop.merchantId,
      shopId: shop.shopId,
      target: id,
      details: {
        [`${target.kind}_id`]: target.id,
        external_id: externalId,
        address,
        received_amount: usdtText(quote.receivedMicro),
        network_fee: usdtText(quote.networkFeeMicro),
      },
    });
  return { created: true, refund: refundView(row, depositIds) };
}

async function priorRefund(tx: Tx, shopId: string, prior: Prior): Promise<RefundView> {
  return shownRefund(tx, await priorResource(prior, 'refund', (id) => repository.findRefundOfShop(tx, shopId, id)));
}

/** A refund as the API shows it: with the ids of the deposits it sends back. */
async function shownRefund(db: Executor, row: repository.RefundRow): Promise<RefundView> {
  return refundView(row, await repository.depositIdsOfRefund(db, row.id));
}

/** A refund of the shop; another shop's, or an unknown id, is 404. */
export async function getRefund(deps: Pick<RefundDeps, 'db'>, shopId: string, refundId: string): Promise<RefundView> {
  const row =
    refundId.startsWith('ref_') && refundId.length <= 64
      ? await repository.findRefundOfShop(deps.db, shopId, refundId)
      : undefined;
  if (!row) throw new NotFoundError('No such refund.');
  return shownRefund(deps.db, row);
}

export const REFUND_STATUSES = [
  'pending',
  'processing',
  'completed',
  'failed',
] as const satisfies readonly RefundStatus[];
const isRefundId = (id: string) => id.startsWith('ref_') && id.length <= 64;
const REFUND_LIST_ORDER = createdAtOrder(isRefundId);

/** A table's filter (the cabinet's refunds): a status, the days, the amount sent back, an exact search. */
export interface RefundTableFilter extends ListRange {
  readonly status?: string | undefined;
  readonly search?: string | undefined;
}

/** The shop's refunds newest first, as the API shows each; the cabinet's table. */
export async function browseRefunds(
  deps: Pick<RefundDeps, 'db'>,
  shopId: string,
  filter: RefundTableFilter,
  page: ListQuery,
): Promise<ListPage<RefundView>> {
  const status = parseStatusFilter(filter.status, REFUND_STATUSES);
  const range: ListRange = {
    createdFrom: filter.createdFrom,
    createdBefore: filter.createdBefore,
    amountMin: filter.amountMin,
    amountMax: filter.amountMax,
  };
  return readListPage(
    page,
    REFUND_LIST_ORDER,
    (window) => repository.listRefunds(deps.db, { shopId, status, range, search: filter.search, ...window }),
    (rows) => Promise.all(rows.map((row) => shownRefund(deps.db, row))),
  );
}

/** The refunds of a deposit (every one, failed too) or asked for an invoice, oldest first: a detail page's history. */
export async function refundsAbout(
  deps: Pick<RefundDeps, 'db'>,
  subject: { readonly depositId: string } | { readonly invoiceId: string },
): Promise<RefundView[]> {
  const rows =
    'depositId' in subject
      ? await repository.refundsOfDeposit(deps.db, subject.depositId)
      : await repository.refundsOfInvoice(deps.db, subject.invoiceId);
  return Promise.all(rows.map((row) => shownRefund(deps.db, row)));
}
