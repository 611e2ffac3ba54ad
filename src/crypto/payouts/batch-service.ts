// Batch payouts: up to 500 payouts accepted whole or not at all. Every item is
// validated first (the message names the first bad item: `payouts[499].amount`);
// then all are quoted, and one transaction inserts the batch, its items and
// their queued transfers and reserves every item's total_debit (linked
// reservations per item, so each item completes or fails on its own).
// Idempotent by the batch's external_id. Decisions: docs/payouts-api.md.
import { recordAudit } from '../../audit/audit-service.ts';
import {
  createdAtOrder,
  parseStatusFilter,
  readListPage,
  type ListPage,
  type ListQuery,
  type ListRange,
} from '../../db/list-page.ts';
import { isUniqueViolation, type Executor, type Tx } from '../../db/transaction.ts';
import { depositAddressesAmong } from '../receiving/address-allocation.ts';
import { usdtText } from '../receiving/receiving-views.ts';
import { AmountNotSupportedError, DuplicateExternalIdError, InvalidRequestError, NotFoundError } from '../../errors.ts';
import {
  createUnderKey,
  priorOutcome,
  priorResource,
  type IdempotencyRule,
  type KeyedCreation,
  type Prior,
  keyedRequest,
} from '../../idempotency/idempotency-service.ts';
import { newId } from '../../ids.ts';
import { createOnEnergyQuotes, previewEnergyQuotes } from './energy-quotes.ts';
import { quotePayouts } from './payout-fees.ts';
import { payoutSettingsOf } from './payout-settings.ts';
import {
  checkAgainstSettings,
  checkPayoutsOn,
  checkRecipients,
  insertQueuedPayouts,
  parseExternalId,
  parsePayoutNetwork,
  parsePayoutAmount,
  parseRecipient,
  validatePayoutItem,
  type CreationOptions,
  type PayoutDeps,
  type PayoutShop,
  type ValidPayoutItem,
} from './payout-service.ts';
import * as repository from './payouts-repository.ts';
import type { BatchRow } from './payouts-repository.ts';
import { BATCH_STATUSES } from './payouts-tables.ts';
import { batchSummaryView, batchView, type BatchSummaryView, type BatchView } from './payouts-views.ts';

export const BATCH_ITEMS_MAX = 500;

export interface CreateBatchRequest {
  readonly external_id: string;
  readonly network: string;
  readonly payouts: readonly { readonly external_id: string; readonly amount: string; readonly address: string }[];
}

const BATCH_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'crypto.payout_batch.create',
  windowMs: null,
  replay: 'current-resource',
  conflictMessage:
    'A batch payout with this external_id already exists with other parameters; use a new external_id for a new batch.',
};

function validateItems(request: CreateBatchRequest): ValidPayoutItem[] {
  if (!Array.isArray(request.payouts) || request.payouts.length < 1 || request.payouts.length > BATCH_ITEMS_MAX) {
    throw new InvalidRequestError(`payouts must list 1 to ${BATCH_ITEMS_MAX} payouts.`);
  }
  const firstIndexOf = new Map<string, number>();
  return request.payouts.map((raw, index) => {
    const item = validatePayoutItem(raw, `payouts[${index}].`);
    const earlier = firstIndexOf.get(item.externalId);
    if (earlier !== undefined)
      throw new InvalidRequestError(
        `payouts[${index}].external_id repeats payouts[${earlier}].external_id; each item needs its own.`,
      );
    firstIndexOf.set(item.externalId, index);
    return item;
  });
}

/** POST /v1/crypto/payouts/batch: the batch and its items, or the batch created earlier with this external_id. */
export async function createBatch(
  deps: PayoutDeps,
  shop: PayoutShop,
  request: CreateBatchRequest,
  options: CreationOptions = {},
): Promise<{ created: boolean; batch: BatchView }> {
  const externalId = parseExternalId(request.external_id, 'external_id');
  const network = parsePayoutNetwork(request.network);
  const items = validateItems(request);
  const keyed = keyedRequest(shop.shopId, externalId, {
    network,
    payouts: items.map((item) => [item.externalId, item.amountMicro.toString(), item.address]),
  });
  const creation: KeyedCreation<{ created: boolean; batch: BatchView }> = {
    rule: BATCH_IDEMPOTENCY_RULE,
    request: keyed,
    showPrior: async (tx, prior) => ({ created: false, batch: await priorBatch(tx, shop.shopId, prior) }),
  };
  const existing = await priorOutcome(deps.db, deps.clock, creation);
  if (existing) return existing;

  const settings = await payoutSettingsOf(deps.db, shop.shopId);
  const access = await deps.chain.forMode(shop.mode);
  items.forEach((item, index) => checkAgainstSettings(settings, item.amountMicro, `payouts[${index}].amount`));
  await deps.signingPause.assertNotPaused(deps.db, shop.mode);
  await checkRecipients(
    deps.db,
    access,
    items.map((item, index) => ({ address: item.address, field: `payouts[${index}].address` })),
  );
  const transferIds = items.map(() => newId('outgoingTransfer'));
  const quoted = await quotePayouts(access, deps, settings, items);
  try {
    return await createOnEnergyQuotes(deps, access, quoted, transferIds, (quotes) =>
      createUnderKey(deps.db, deps.clock, creation, async (tx, record) => {
        const batchId = newId('payoutBatch');
        await record({ resourceId: batchId });
        await refuseTakenExternalIds(tx, shop.shopId, items);
        const now = deps.clock.now();
        const batch = await repository.insertBatch(tx, {
          id: batchId,
          shop_id: shop.shopId,
          external_id: externalId,
          network,
          status: 'pending',
          item_count: items.length,
          total_debit_micro: quotes.reduce((sum, quote) => sum + quote.totalDebitMicro, 0n),
          created_at: now,
          updated_at: now,
          completed_at: null,
        });
        const rows = await insertQueuedPayouts(
          tx,
          deps.clock,
          shop,
          access,
          items.map((item, index) => ({
            id: newId('payout'),
            item,
            quote: quotes[index]!,
            transferId: transferIds[index]!,
          })),
          batchId,
        );
        if (options.actor)
          await recordAudit(tx, deps.clock, {
            actor: options.actor,
            action: 'payout_batch.requested',
            merchantId: shop.merchantId,
            shopId: shop.shopId,
            target: batchId,
            details: { external_id: externalId, items: items.length, total_debit: usdtText(batch.total_debit_micro) },
          });
        return { created: true, batch: batchView(batch, rows) };
      }),
    );
  } catch (error) {
    if (isUniqueViolation(error, repository.PAYOUT_EXTERNAL_ID_CONSTRAINT)) {
      throw new DuplicateExternalIdError(
        'An item’s external_id is held by a payout created meanwhile; use new external_ids for new payouts.',
      );
    }
    throw error;
  }
}

/** Item external_ids share one namespace with every payout of the shop: one already used is 409, naming the first such item. */
async function refuseTakenExternalIds(tx: Tx, shopId: string, items: readonly ValidPayoutItem[]): Promise<void> {
  const taken = new Set(
    await repository.takenExternalIds(
      tx,
      shopId,
      items.map((item) => item.externalId),
    ),
  );
  const index = items.findIndex((item) => taken.has(item.externalId));
  if (index >= 0) {
    throw new DuplicateExternalIdError(
      `payouts[${index}].external_id is already the external_id of another payout of this shop; nothing was created.`,
    );
  }
}

async function priorBatch(tx: Tx, shopId: string, prior: Prior): Promise<BatchView> {
  return shownBatch(tx, await priorResource(prior, 'payout batch', (id) => repository.findBatchOfShop(tx, shopId, id)));
}

/** A batch as the API shows it: with its items. */
async function shownBatch(db: Executor, batch: BatchRow): Promise<BatchView> {
  return batchView(batch, await repository.batchItems(db, batch.id));
}

/** A batch of the shop with its items and counts per state; another shop's, or an unknown id, is 404. */
export async function getBatch(deps: Pick<PayoutDeps, 'db'>, shopId: string, batchId: string): Promise<BatchView> {
  const batch =
    batchId.startsWith('pob_') && batchId.length <= 100
      ? await repository.findBatchOfShop(deps.db, shopId, batchId)
      : undefined;
  if (!batch) throw new NotFoundError('No such batch payout.');
  return shownBatch(deps.db, batch);
}

const BATCH_LIST_ORDER = createdAtOrder((id) => id.startsWith('pob_'));

/** The cabinet's table of batches: a status, a window of days and total debits, an exact batch id or external_id. */
export interface BatchBrowseFilter extends ListRange {
  readonly status?: string | undefined;
  readonly search?: string | undefined;
}

export async function browseBatches(
  deps: Pick<PayoutDeps, 'db'>,
  shopId: string,
  filter: BatchBrowseFilter,
  page: ListQuery,
): Promise<ListPage<BatchSummaryView>> {
  const status = parseStatusFilter(filter.status, BATCH_STATUSES);
  return readListPage(
    page,
    BATCH_LIST_ORDER,
    (window) => repository.listBatches(deps.db, { shopId, status, range: filter, search: filter.search, ...window }),
    async (rows) => {
      const counts = await repository.itemCountsOfBatches(
        deps.db,
        rows.map((row) => row.id),
      );
      return rows.map((row) => batchSummaryView(row, counts.get(row.id)));
    },
  );
}

// ---- a batch reviewed before it is created (the cabinet's CSV upload) ----

/** What is wrong with one item: its index in the list, the field, the message. */
export interface BatchItemProblem {
  readonly index: number;
  readonly field: 'external_id' | 'amount' | 'address';
  readonly message: string;
}

export type BatchReview =
  | { readonly ok: false; readonly problems: readonly BatchItemProblem[] }
  | { readonly ok: true; readonly itemCount: number; readonly totalDebitMicro: bigint };

async function problemOf(
  index: number,
  field: BatchItemProblem['field'],
  check: () => unknown,
): Promise<BatchItemProblem[]> {
  try {
    await check();
    return [];
  } catch (error) {
    if (!(error instanceof InvalidRequestError || error instanceof AmountNotSupportedError)) throw error;
    return [{ index, field, message: error.message }];
  }
}

/**
 * Every problem of every item that createBatch would refuse (its first one), so a
 * person sees them all at once: the fields, an external_id repeated in the list or
 * held by a payout of the shop, the shop's limits, the recipients refused. When
 * there is none, the total debit of the batch as it would be quoted now. Payouts
 * switched off or paused are thrown as createBatch throws them. Nothing is written.
 */
export async function reviewBatch(
  deps: PayoutDeps,
  shop: PayoutShop,
  payouts: CreateBatchRequest['payouts'],
): Promise<BatchReview> {
  if (payouts.length < 1 || payouts.length > BATCH_ITEMS_MAX)
    throw new InvalidRequestError(`payouts must list 1 to ${BATCH_ITEMS_MAX} payouts.`);
  const settings = await payoutSettingsOf(deps.db, shop.shopId);
  checkPayoutsOn(settings);
  await deps.signingPause.assertNotPaused(deps.db, shop.mode);
  const access = await deps.chain.forMode(shop.mode);
  const addresses = payouts.map((raw) => raw.address).filter((address) => typeof address === 'string');
  const ours = await depositAddressesAmong(deps.db, [...new Set(addresses)]);
  const taken = new Set(
    await repository.takenExternalIds(
      deps.db,
      shop.shopId,
      payouts.map((raw) => raw.external_id),
    ),
  );
  const firstIndexOf = new Map<string, number>();
  const problems: BatchItemProblem[] = [];
  for (const [index, raw] of payouts.entries()) {
    problems.push(
      ...(await problemOf(index, 'external_id', () => {
        const externalId = parseExternalId(raw.external_id, 'external_id');
        const earlier = firstIndexOf.get(externalId);
        if (earlier !== undefined)
          throw new InvalidRequestError(`external_id repeats the external_id of item ${earlier + 1}.`);
        firstIndexOf.set(externalId, index);
        if (taken.has(externalId))
          throw new InvalidRequestError('external_id is already the external_id of another payout of this shop.');
      })),
      ...(await problemOf(index, 'amount', () =>
        checkAgainstSettings(settings, parsePayoutAmount(raw.amount, 'amount'), 'amount'),
      )),
    );
    // A deposit address of ours was looked up for all rows at once (`ours`): no query per row.
    problems.push(
      ...(await problemOf(index, 'address', () =>
        checkRecipients(deps.db, access, [{ address: parseRecipient(raw.address, 'address'), field: 'address' }], ours),
      )),
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  const items = payouts.map((raw) => validatePayoutItem(raw));
  const quotes = await previewEnergyQuotes(deps, access, await quotePayouts(access, deps, settings, items));
  return {
    ok: true,
    itemCount: items.length,
    totalDebitMicro: quotes.reduce((sum, quote) => sum + quote.totalDebitMicro, 0n),
  };
}
