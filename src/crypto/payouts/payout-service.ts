// Payouts: validation, fee quotes, creation (idempotent by external_id, with the
// reservation of total_debit and the queued outgoing transfer in one
// transaction), reads and lists. The executor's outcomes move payouts on
// (payout-outcomes.ts). Rules and decisions: docs/payouts-api.md.
import type { Logger } from 'pino';
import type { AuditActor, AuditEventInput } from '../../audit/audit-service.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { isUniqueViolation, type Db, type Executor, type Tx } from '../../db/transaction.ts';
import {
  AmountNotSupportedError,
  DuplicateExternalIdError,
  InvalidRequestError,
  NotFoundError,
  ServiceUnavailableError,
} from '../../errors.ts';
import {
  createAtomicallyWith,
  priorResource,
  type IdempotencyRule,
  type Prior,
  keyedRequest,
  type KeyedRequest,
} from '../../idempotency/idempotency-service.ts';
import { newId } from '../../ids.ts';
import type { ShopMode } from '../../merchants/merchant-service.ts';
import { parseMinor } from '../../money/decimal.ts';
import type { SigningPauseCheck } from '../custody/signing-pause.ts';
import type { ChainAccess, CryptoChain } from '../chain/crypto-chain.ts';
import { depositAddressesAmong } from '../receiving/address-allocation.ts';
import {
  createdAtOrder,
  parseStatusFilter,
  readListPage,
  type ListPage,
  type ListQuery,
  type ListRange,
} from '../../db/list-page.ts';
import { findOutgoingTransfer } from '../sending/outgoing-transfers.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import { enqueueOutgoingTransfers, type OutgoingTransferRequest } from '../sending/outgoing-transfers.ts';
import { noOutcomeYet } from '../sending/reserved-transfer.ts';
import { explainUnwrittenReservation } from '../../ledger/ledger-service.ts';
import { parseTronAddress, type TronAddress } from '../tron/address.ts';
import type { PayoutCreationBatches } from './creation-batches.ts';
import { createOnEnergyQuotes, previewEnergyQuotes } from './energy-quotes.ts';
import { quotePayouts, type PayoutQuote } from './payout-fees.ts';
import { AccountIds, payoutFanOut, reservePayouts, type CommittedAccountIds } from './payout-ledger.ts';
import { payoutSettingsOf, settingsOfRow, type PayoutSettings } from './payout-settings.ts';
import { emitPayoutsUpdated } from './payouts-events.ts';
import * as repository from './payouts-repository.ts';
import type { PayoutRow } from './payouts-repository.ts';
import { PAYOUT_STATUSES } from './payouts-tables.ts';
import { payoutView, type PayoutView } from './payouts-views.ts';

export const EXTERNAL_ID_MAX_LENGTH = 100;
/** 10^9 USDT: no payout amount above it passes validation (the shop's maximum is usually far lower). */
const AMOUNT_MAX_MICRO = 1_000_000_000_000_000n;
const PAYOUTS_OFF_RETRY_AFTER_SECONDS = 300;

/** What a service that sends the hot wallet's USDT needs (payouts, refunds, withdrawals): the fee quote's and the chain's. */
export interface HotWalletSenderDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<
    Config,
    'trxUsdtRateMicro' | 'tronTransferEnergyMax' | 'tronEnergySources' | 'tronEnergyRental'
  >;
  readonly chain: Pick<CryptoChain, 'forMode'>;
  readonly logger: Logger;
}

export interface PayoutDeps extends HotWalletSenderDeps {
  /** A book whose custody came up short takes no new payouts (503) until an operator acknowledges. */
  readonly signingPause: SigningPauseCheck;
  /** The payouts module's statement batchers: concurrent creations read and commit together. */
  readonly batches: PayoutCreationBatches;
  /** The payouts module's memory of committed ledger account ids: a warm key skips ensureAccounts' read. */
  readonly committedAccountIds: CommittedAccountIds;
}

export interface PayoutShop {
  readonly shopId: string;
  readonly merchantId: string;
  readonly mode: ShopMode;
}

export interface CreatePayoutRequest {
  readonly external_id: string;
  readonly network: string;
  readonly amount: string;
  readonly address: string;
}

const PAYOUT_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'crypto.payout.create',
  windowMs: null,
  replay: 'current-resource',
  conflictMessage:
    'A payout with this external_id already exists with other parameters; use a new external_id for a new payout.',
};

// ---- validation ----

const PAYOUT_DECIMAL_PLACES_MAX = 2;

/** Digits after the point of a decimal string that parseMinor has accepted. */
function fractionDigits(decimal: string): number {
  const point = decimal.indexOf('.');
  return point === -1 ? 0 : decimal.length - point - 1;
}

/** A payout amount: a decimal STRING, more than 0, at most 2 decimal places in its text (spec 2.3). */
export function parsePayoutAmount(value: unknown, field: string): bigint {
  if (typeof value !== 'string')
    throw new InvalidRequestError(`${field} must be a decimal string such as "10.50" (a JSON string, not a number).`);
  const parsed = parseMinor(value, 'USDT', 'decimal-string');
  if (!parsed.ok)
    throw new InvalidRequestError(`${field} must be a decimal string such as "10.50" with at most 2 decimal places.`);
  // The places are counted in the text, zeros too: "10.010" and "10.000000" have more than 2.
  if (fractionDigits(value) > PAYOUT_DECIMAL_PLACES_MAX)
    throw new InvalidRequestError(`${field} has more than 2 decimal places; payout amounts have at most 2.`);
  if (parsed.minor <= 0n) throw new InvalidRequestError(`${field} must be greater than 0.`);
  if (parsed.minor > AMOUNT_MAX_MICRO) throw new InvalidRequestError(`${field} must be at most 1000000000.`);
  return parsed.minor;
}

export function parsePayoutNetwork(value: unknown, field = 'network'): 'TRC20' {
  if (value !== 'TRC20')
    throw new InvalidRequestError(
      `${field} ${JSON.stringify(String(value).slice(0, 32))} is not supported; supported networks: TRC20.`,
    );
  return value;
}

export function parseRecipient(value: unknown, field: string): TronAddress {
  if (typeof value !== 'string') throw new InvalidRequestError(`${field} must be a TRON address (a string T…).`);
  const parsed = parseTronAddress(value);
  if (!parsed.ok) throw new InvalidRequestError(`${field} is not a valid TRON address: ${parsed.problem}.`);
  return parsed.address;
}

export function parseExternalId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > EXTERNAL_ID_MAX_LENGTH) {
    throw new InvalidRequestError(`${field} must be a string of 1 to ${EXTERNAL_ID_MAX_LENGTH} characters.`);
  }
  return value;
}

export interface ValidPayoutItem {
  readonly externalId: string;
  readonly amountMicro: bigint;
  readonly address: TronAddress;
}

export function validatePayoutItem(
  request: { external_id?: unknown; amount?: unknown; address?: unknown },
  prefix = '',
): ValidPayoutItem {
  return {
    externalId: parseExternalId(request.external_id, `${prefix}external_id`),
    amountMicro: parsePayoutAmount(request.amount, `${prefix}amount`),
    address: parseRecipient(request.address, `${prefix}address`),
  };
}

/** Payouts switched off for the shop: 503 (nothing else about the request matters then). */
export function checkPayoutsOn(settings: PayoutSettings): void {
  if (!settings.enabled)
    throw new ServiceUnavailableError('Payouts are switched off for this shop.', PAYOUTS_OFF_RETRY_AFTER_SECONDS);
}

/** Payouts switched off for the shop: 503. Outside the shop's limits: 400 amount_not_supported naming the limits. */
export function checkAgainstSettings(settings: PayoutSettings, amountMicro: bigint, field: string): void {
  checkPayoutsOn(settings);
  if (amountMicro < settings.minAmountMicro || amountMicro > settings.maxAmountMicro) {
    throw new AmountNotSupportedError(
      `${field} is outside this shop's payout limits: from ${usdtText(settings.minAmountMicro)} to ${usdtText(settings.maxAmountMicro)} USDT.`,
    );
  }
}

export interface Recipient {
  readonly address: TronAddress;
  /** How the request names it: `address`, `payouts[3].address`. */
  readonly field: string;
}

/**
 * The recipients the gateway refuses (400 invalid_request naming the first such
 * field): its hot wallet (the transfer would move nothing), the chain's USDT
 * contract (tokens sent to it are lost), and every deposit address of this
 * gateway — of any shop, in either book: the watcher would count the transfer as
 * a new deposit and credit it again. One look-up for all of them, unless the
 * caller read `depositAddresses` already (a single payout's first read does).
 */
export async function checkRecipients(
  db: Executor,
  access: ChainAccess,
  recipients: readonly Recipient[],
  depositAddresses?: ReadonlySet<string>,
): Promise<void> {
  for (const recipient of recipients) {
    if (recipient.address === access.addressKey.hotWalletAddress)
      throw new InvalidRequestError(
        `${recipient.field} is the gateway's own hot wallet; name the recipient's address.`,
      );
    if (recipient.address === access.usdtContract)
      throw new InvalidRequestError(
        `${recipient.field} is the USDT contract itself: tokens sent to it are lost; name the recipient's address.`,
      );
  }
  const ours =
    depositAddresses ??
    (await depositAddressesAmong(db, [...new Set(recipients.map((recipient) => recipient.address))]));
  const own = recipients.find((recipient) => ours.has(recipient.address));
  if (own) {
    throw new InvalidRequestError(
      `${own.field} is a deposit address of this gateway; sending to the gateway's own addresses is refused (the transfer would come back as a new deposit). Name the recipient's address.`,
    );
  }
}

// ---- quotes ----

export interface QuoteRequest {
  readonly network: string;
  readonly amount: string;
  readonly address: string;
}

/** A quote shows what the payout would show of its recipient and money. */
export type QuoteView = Pick<
  PayoutView,
  'network' | 'asset' | 'recipient_address' | 'recipient_amount' | 'network_fee' | 'service_fee' | 'total_debit'
>;

/** POST /v1/crypto/payouts/quote: what a payout would cost now; nothing is created or reserved. */
export async function quotePayout(deps: PayoutDeps, shop: PayoutShop, request: QuoteRequest): Promise<QuoteView> {
  const network = parsePayoutNetwork(request.network);
  const amountMicro = parsePayoutAmount(request.amount, 'amount');
  const address = parseRecipient(request.address, 'address');
  const settings = await payoutSettingsOf(deps.db, shop.shopId);
  checkAgainstSettings(settings, amountMicro, 'amount');
  const access = await deps.chain.forMode(shop.mode);
  await checkRecipients(deps.db, access, [{ address, field: 'address' }]);
  const [quote] = await previewEnergyQuotes(
    deps,
    access,
    await quotePayouts(access, deps, settings, [{ address, amountMicro }]),
  );
  return {
    network,
    asset: 'USDT',
    recipient_address: address,
    recipient_amount: usdtText(quote!.amountMicro),
    network_fee: usdtText(quote!.networkFeeMicro),
    service_fee: usdtText(quote!.serviceFeeMicro),
    total_debit: usdtText(quote!.totalDebitMicro),
  };
}

function payoutValues(quote: PayoutQuote) {
  return {
    amount_micro: quote.amountMicro,
    network_fee_micro: quote.networkFeeMicro,
    service_fee_micro: quote.serviceFeeMicro,
    total_debit_micro: quote.totalDebitMicro,
    trx_usdt_rate_micro: quote.rateMicro,
  };
}

// ---- creation ----

/** Who asked for a creation, when a person did (the cabinet): audited with the payout, in its statement. */
export interface CreationOptions {
  readonly actor?: AuditActor | undefined;
}

/** `payout.requested`: the payout a person asked for, as created. */
function requestedAudit(actor: AuditActor, shop: PayoutShop, row: PayoutRow): AuditEventInput {
  return {
    actor,
    action: 'payout.requested',
    merchantId: shop.merchantId,
    shopId: shop.shopId,
    target: row.id,
    details: {
      external_id: row.external_id,
      amount: usdtText(row.amount_micro),
      address: row.recipient_address,
      total_debit: usdtText(row.total_debit_micro),
    },
  };
}

/** A new payout's row, pending: a single payout (batch null) or a batch's item at its index. */
function newPayoutRow(
  now: Date,
  shop: PayoutShop,
  access: ChainAccess,
  payout: { readonly id: string; readonly item: ValidPayoutItem; readonly quote: PayoutQuote },
  batch: { readonly batchId: string; readonly index: number } | null,
  outgoingTransferId: string,
): PayoutRow {
  return {
    id: payout.id,
    shop_id: shop.shopId,
    external_id: payout.item.externalId,
    batch_id: batch?.batchId ?? null,
    batch_index: batch?.index ?? null,
    network: 'TRC20',
    chain: access.chain,
    network_mode: access.networkMode,
    recipient_address: payout.item.address,
    ...payoutValues(payout.quote),
    status: 'pending',
    outgoing_transfer_id: outgoingTransferId,
    ...noOutcomeYet(now),
  };
}

/** The outgoing transfer of a payout: its amount in USDT from the hot wallet to its recipient. */
function payoutTransfer(access: ChainAccess, payoutId: string, item: ValidPayoutItem): OutgoingTransferRequest {
  return {
    chain: access.chain,
    purpose: 'payout',
    ownerId: payoutId,
    asset: 'USDT',
    from: { kind: 'hot_wallet' },
    to: item.address,
    amount: item.amountMicro,
  };
}

/** The rows of new payouts (single or a batch's items) with their transfers queued, in the caller's transaction. */
export async function insertQueuedPayouts(
  tx: Tx,
  clock: Clock,
  shop: PayoutShop,
  access: ChainAccess,
  items: readonly {
    readonly id: string;
    readonly item: ValidPayoutItem;
    readonly quote: PayoutQuote;
    /** Its outgoing transfer's id, named before (own energy reserved for it). */
    readonly transferId: string;
  }[],
  batchId: string | null,
  accountIds?: AccountIds,
): Promise<PayoutRow[]> {
  const now = clock.now();
  const transfers = await enqueueOutgoingTransfers(
    tx,
    clock,
    items.map(({ id, item }) => payoutTransfer(access, id, item)),
    items.map(({ transferId }) => transferId),
  );
  const rows = items.map(({ id, item, quote }, index) =>
    newPayoutRow(
      now,
      shop,
      access,
      { id, item, quote },
      batchId === null ? null : { batchId, index },
      transfers[index]!.id,
    ),
  );
  const inserted = await repository.insertPayouts(tx, rows);
  await emitPayoutsUpdated(tx, clock, inserted);
  // Last: the merchant's balance row stays locked from here to COMMIT, and every payout of the merchant waits on it.
  await reservePayouts(tx, clock, { book: shop.mode, merchantId: shop.merchantId }, inserted, accountIds);
  return inserted;
}

/**
 * POST /v1/crypto/payouts (spec 4.2). The same external_id with the same
 * parameters is the same payout (created: false, its current state); with other
 * parameters, 409 duplicate_external_id. The fee quote reads the chain before
 * writing. Statements: the repeat check with the settings (one read), then ONE
 * statement that reserves total_debit (the ledger's fan-out reservation, the
 * affordability test in its own UPDATE), queues the outgoing transfer, writes
 * the payout, its idempotency record and its webhook event — all or nothing;
 * concurrent requests share that statement (creation-batches.ts), each payout
 * written or refused on its own. A concurrent duplicate fails the statement on
 * the record's (or the payout's) unique key and answers the winner's payout.
 */
export async function createPayout(
  deps: PayoutDeps,
  shop: PayoutShop,
  request: CreatePayoutRequest,
  options: CreationOptions = {},
): Promise<{ created: boolean; payout: PayoutView }> {
  const item = validatePayoutItem(request);
  const network = parsePayoutNetwork(request.network);
  const keyed = keyedRequest(shop.shopId, item.externalId, {
    network,
    amount_micro: item.amountMicro.toString(),
    address: item.address,
  });
  // A repeat is answered before the settings and the node count: the payout and its idempotency
  // record commit together, so the payout row is the record's outcome (one autocommit read with the settings).
  const state = await deps.batches.readCreationState({
    shopId: shop.shopId,
    externalId: item.externalId,
    recipient: item.address,
  });
  if (state.payout && state.payout.batch_id === null)
    return { created: false, payout: repeatedPayout(state.payout, item) };
  if (state.payout) throw new DuplicateExternalIdError(BATCH_HOLDS_EXTERNAL_ID);
  const settings = settingsOfRow(state.settings);

  checkAgainstSettings(settings, item.amountMicro, 'amount');
  await deps.signingPause.assertNotPaused(deps.db, shop.mode);
  const access = await deps.chain.forMode(shop.mode);
  await checkRecipients(
    deps.db,
    access,
    [{ address: item.address, field: 'address' }],
    new Set(state.recipientIsDepositAddress ? [item.address] : []),
  );
  const transferId = newId('outgoingTransfer');
  const quoted = await quotePayouts(access, deps, settings, [item]);
  return createOnEnergyQuotes(deps, access, quoted, [transferId], ([quote]) =>
    writePayout(deps, shop, access, { item, keyed, quote: quote!, transferId }, options),
  );
}

/** createPayout's writing: the payout, its reservation, transfer and record in one statement shared with concurrent creations. */
async function writePayout(
  deps: PayoutDeps,
  shop: PayoutShop,
  access: ChainAccess,
  payout: {
    readonly item: ValidPayoutItem;
    readonly keyed: KeyedRequest;
    readonly quote: PayoutQuote;
    readonly transferId: string;
  },
  options: CreationOptions,
): Promise<{ created: boolean; payout: PayoutView }> {
  const { item, keyed } = payout;
  const now = deps.clock.now();
  const row = newPayoutRow(
    now,
    shop,
    access,
    { id: newId('payout'), item, quote: payout.quote },
    null,
    payout.transferId,
  );
  const fanOut = await payoutFanOut(
    deps.db,
    deps.clock,
    { book: shop.mode, merchantId: shop.merchantId },
    row,
    new AccountIds(deps.committedAccountIds),
  );
  try {
    const outcome = await createAtomicallyWith(
      deps.db,
      deps.clock,
      PAYOUT_IDEMPOTENCY_RULE,
      keyed,
      { resourceId: row.id },
      async (record): Promise<{ readonly created: PayoutRow } | { readonly existing: PayoutRow }> => {
        for (let attempt = 1; ; attempt++) {
          const inserted = await deps.batches.commitPayoutCreation({
            payout: row,
            fanOut,
            outgoing: payoutTransfer(access, row.id, item),
            record,
            audit: options.actor && requestedAudit(options.actor, shop, row),
          });
          if (inserted) return { created: inserted };
          // Nothing written. A request with this external_id may have been written first (a
          // client's retry, or this payout's own statement committed before its connection
          // dropped): its reservation then left none for this one, and no unique key was reached.
          const holder = (
            await deps.batches.readCreationState({
              shopId: shop.shopId,
              externalId: item.externalId,
              recipient: item.address,
            })
          ).payout;
          if (holder) return { existing: holder };
          // Otherwise InsufficientFundsError (400 insufficient_funds), or the balance moved meanwhile: again.
          await explainUnwrittenReservation(deps.db, fanOut);
          if (attempt >= RESERVATION_ATTEMPTS_MAX)
            throw new Error(`payout ${row.id}: the reservation wrote nothing ${attempt} times with funds available`);
        }
      },
      [repository.PAYOUT_EXTERNAL_ID_CONSTRAINT],
    );
    if (outcome.kind === 'created') {
      if ('created' in outcome.value) return { created: true, payout: payoutView(outcome.value.created) };
      const holder = outcome.value.existing;
      if (holder.batch_id !== null) throw new DuplicateExternalIdError(BATCH_HOLDS_EXTERNAL_ID);
      return { created: false, payout: repeatedPayout(holder, item) };
    }
    return { created: false, payout: await priorPayout(deps.db, shop.shopId, outcome) };
  } catch (error) {
    // A batch item took the external_id between the repeat check and the insert.
    if (isUniqueViolation(error, repository.PAYOUT_EXTERNAL_ID_CONSTRAINT))
      throw new DuplicateExternalIdError(BATCH_HOLDS_EXTERNAL_ID);
    throw error;
  }
}

const BATCH_HOLDS_EXTERNAL_ID =
  'An item of a batch payout already holds this external_id; use a new external_id for a new payout.';
/** Rounds of "the reservation wrote nothing, yet the funds are there" (a balance that moved meanwhile) before giving up. */
const RESERVATION_ATTEMPTS_MAX = 3;

/** The existing single payout of a repeated external_id: the same parameters answer it as it is now, others are 409. */
function repeatedPayout(row: PayoutRow, item: ValidPayoutItem): PayoutView {
  if (row.network !== 'TRC20' || row.amount_micro !== item.amountMicro || row.recipient_address !== item.address) {
    throw new DuplicateExternalIdError(PAYOUT_IDEMPOTENCY_RULE.conflictMessage);
  }
  return payoutView(row);
}

async function priorPayout(db: Executor, shopId: string, prior: Prior): Promise<PayoutView> {
  return payoutView(await priorResource(prior, 'payout', (id) => repository.findPayoutOfShop(db, shopId, id)));
}

// ---- reads ----

/** A payout of the shop; another shop's, or an unknown id, is 404. */
export async function getPayout(deps: Pick<PayoutDeps, 'db'>, shopId: string, payoutId: string): Promise<PayoutView> {
  const row =
    payoutId.startsWith('po_') && payoutId.length <= 100
      ? await repository.findPayoutOfShop(deps.db, shopId, payoutId)
      : undefined;
  if (!row) throw new NotFoundError('No such payout.');
  return payoutView(row);
}

const PAYOUT_LIST_ORDER = createdAtOrder((id) => id.startsWith('po_'));

export interface ListPayoutsInput extends ListQuery {
  readonly status?: string | undefined;
  readonly external_id?: string | undefined;
}

export async function listPayouts(
  deps: Pick<PayoutDeps, 'db'>,
  shopId: string,
  input: ListPayoutsInput,
): Promise<ListPage<PayoutView>> {
  const status = parseStatusFilter(input.status, PAYOUT_STATUSES);
  return readListPage(
    input,
    PAYOUT_LIST_ORDER,
    (window) => repository.listPayouts(deps.db, { shopId, status, externalId: input.external_id, ...window }),
    (rows) => rows.map(payoutView),
  );
}

/** The cabinet's table of payouts: the API's status filter, a window of days and amounts, an exact search. */
export interface PayoutBrowseFilter extends ListRange {
  readonly status?: string | undefined;
  /** A payout id, external_id, recipient address or tx hash, exactly. */
  readonly search?: string | undefined;
}

export async function browsePayouts(
  deps: Pick<PayoutDeps, 'db'>,
  shopId: string,
  filter: PayoutBrowseFilter,
  page: ListQuery,
): Promise<ListPage<PayoutView>> {
  const status = parseStatusFilter(filter.status, PAYOUT_STATUSES);
  return readListPage(
    page,
    PAYOUT_LIST_ORDER,
    (window) => repository.listPayouts(deps.db, { shopId, status, range: filter, search: filter.search, ...window }),
    (rows) => rows.map(payoutView),
  );
}

/** A payout with the moments of its outgoing transfer: for its page in the cabinet. */
export interface PayoutHistory {
  readonly payout: PayoutView;
  /** When its transaction first went to the node; null while queued. */
  readonly submittedAt: Date | null;
  /** When the chain's answer became final; null until then. */
  readonly finalAt: Date | null;
}

/** A payout of the shop and its transfer's moments; another shop's, or an unknown id, is 404. */
export async function payoutHistory(
  deps: Pick<PayoutDeps, 'db'>,
  shopId: string,
  payoutId: string,
): Promise<PayoutHistory> {
  const row =
    payoutId.startsWith('po_') && payoutId.length <= 100
      ? await repository.findPayoutOfShop(deps.db, shopId, payoutId)
      : undefined;
  if (!row) throw new NotFoundError('No such payout.');
  const transfer = await findOutgoingTransfer(deps.db, row.outgoing_transfer_id);
  return { payout: payoutView(row), submittedAt: transfer?.submittedAt ?? null, finalAt: transfer?.finalAt ?? null };
}
