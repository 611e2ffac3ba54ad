// What a merchant sees of the ledger through the API: its balances, transfers
// between its own accounts, and its operation history. No HTTP here.
import { recordAudit, type AuditActor } from '../audit/audit-service.ts';
import { isStorableInstant, type Clock } from '../clock.ts';
import { decodeSequenceCursor, encodeSequenceCursor } from '../db/list-cursor.ts';
import { inTransaction, type Db } from '../db/transaction.ts';
import {
  createOrReplay,
  inIdempotentTransaction,
  type IdempotencyRule,
  keyedRequest,
} from '../idempotency/idempotency-service.ts';
import { DuplicateExternalIdError, InvalidRequestError, NotFoundError } from '../errors.ts';
import { ensureMerchantAccounts } from './ledger-accounts.ts';
import * as repository from './ledger-repository.ts';
import type { AccountRow, OperationListRow } from './ledger-repository.ts';
import { findTransfer, transfer, type LedgerTransfer } from './ledger-service.ts';
import type { LedgerBook, LedgerCurrency, TransferStatus } from './ledger-tables.ts';
import { unitsToMinor } from '../money/asset.ts';
import { formatMinor, parseMinor } from '../money/decimal.ts';

/** The largest amount one API transfer may move: one billion units of the currency. */
const MAX_TRANSFER_UNITS = 1_000_000_000n;

/** A transfer's `amount`: a positive decimal string with at most the currency's places, up to a billion units. */
function parseTransferAmount(text: string, currency: LedgerCurrency): bigint {
  const parsed = parseMinor(text, currency, 'decimal-string');
  if (!parsed.ok) throw new InvalidRequestError(`amount ${parsed.problem}, got "${text.slice(0, 40)}"`);
  if (parsed.minor <= 0n) throw new InvalidRequestError('amount must be greater than zero');
  if (parsed.minor > unitsToMinor(MAX_TRANSFER_UNITS, currency))
    throw new InvalidRequestError(`amount must be at most ${MAX_TRANSFER_UNITS} ${currency}`);
  return parsed.minor;
}

export interface BalanceDeps {
  readonly db: Db;
  readonly clock: Clock;
}

export interface AccountBalanceView {
  account_id: string;
  currency: LedgerCurrency;
  kind: string;
  available: string;
  pending: string;
  total: string;
}

/**
 * available = posted credits − posted debits − outgoing reserved (debits pending);
 * pending = outgoing reserved + incoming pending (credits pending: deposits confirming);
 * total = available + pending.
 */
function balanceView(row: AccountRow): AccountBalanceView {
  const available = row.credits_posted - row.debits_posted - row.debits_pending;
  const pending = row.debits_pending + row.credits_pending;
  return {
    account_id: row.id,
    currency: row.currency,
    kind: row.kind,
    available: formatMinor(available, row.currency),
    pending: formatMinor(pending, row.currency),
    total: formatMinor(available + pending, row.currency),
  };
}

const ACCOUNT_ORDER = ['RUB:main', 'RUB:payout', 'USDT:main', 'USDT:payout'];

/** Whose balances a key sees: its merchant's accounts in the book of its shop's mode, never the other book. */
export interface LedgerOwner {
  /** The shop whose key acts: external_ids are its idempotency keys. */
  readonly shopId: string;
  readonly merchantId: string;
  readonly book: LedgerBook;
}

export async function getBalances(deps: BalanceDeps, owner: LedgerOwner): Promise<{ accounts: AccountBalanceView[] }> {
  // Creates the merchant's four accounts on first sight (an idempotent insert), so they show before any money moved.
  const rows = await inTransaction(deps.db, (tx) =>
    ensureMerchantAccounts(tx, deps.clock, owner.book, owner.merchantId),
  );
  const fresh = await repository.findAccountsByIds(
    deps.db,
    rows.map((row) => row.id),
  );
  fresh.sort(
    (a, b) => ACCOUNT_ORDER.indexOf(`${a.currency}:${a.kind}`) - ACCOUNT_ORDER.indexOf(`${b.currency}:${b.kind}`),
  );
  return { accounts: fresh.map(balanceView) };
}

export const EXTERNAL_ID_MAX_LENGTH = 100;

export interface InternalTransferRequest {
  readonly external_id: string;
  readonly from_account_id: string;
  readonly to_account_id: string;
  readonly amount: string;
}

export interface InternalTransferView {
  transfer_id: string;
  external_id: string;
  from_account_id: string;
  to_account_id: string;
  amount: string;
  currency: LedgerCurrency;
  status: string;
  created_at: string;
}

function transferView(row: LedgerTransfer, externalId: string): InternalTransferView {
  return {
    transfer_id: row.transferId,
    external_id: externalId,
    from_account_id: row.debitAccountId,
    to_account_id: row.creditAccountId,
    amount: formatMinor(row.amount, row.currency),
    currency: row.currency,
    status: row.status,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * The ledger id of a merchant's API transfer: external ids are unique per merchant and book.
 * Sandbox ids keep the form they had before books existed, so earlier transfers still replay.
 */
function internalTransferLedgerId(owner: LedgerOwner, externalId: string): string {
  return owner.book === 'sandbox'
    ? `balance-transfer:${owner.merchantId}:${externalId}`
    : `balance-transfer:live:${owner.merchantId}:${externalId}`;
}

const SHARED_BY_SHOPS =
  'Transfer external_ids are unique per merchant (and sandbox/live): every shop of the merchant moves the same balance.';

/** API.md: transfers are idempotent by external_id, for good — a repeat with the same parameters is the transfer made first. */
const BALANCE_TRANSFER_IDEMPOTENCY_RULE: IdempotencyRule = {
  operation: 'balance.transfer',
  windowMs: null,
  replay: 'current-resource',
  conflictMessage:
    'This external_id was already used for a transfer with different parameters (accounts or amount); use a new external_id for a new transfer.',
};

export async function createInternalTransfer(
  deps: BalanceDeps,
  owner: LedgerOwner,
  request: InternalTransferRequest,
  /** Who the audit log names (a cabinet user); recorded as `balance.transferred` with the transfer, when given. */
  actor?: AuditActor,
): Promise<{ created: boolean; transfer: InternalTransferView }> {
  const externalId = request.external_id;
  if (externalId.trim() === '' || externalId.length > EXTERNAL_ID_MAX_LENGTH) {
    throw new InvalidRequestError(`external_id must be 1 to ${EXTERNAL_ID_MAX_LENGTH} characters and not blank`);
  }
  if (request.from_account_id === request.to_account_id) {
    throw new InvalidRequestError(
      'from_account_id and to_account_id are the same account; a transfer needs two different accounts',
    );
  }
  const ledgerId = internalTransferLedgerId(owner, externalId);
  return inIdempotentTransaction(deps.db, async (tx) => {
    await ensureMerchantAccounts(tx, deps.clock, owner.book, owner.merchantId);
    const accounts = await repository.findAccountsByIds(tx, [request.from_account_id, request.to_account_id]);
    // An account of the other book is not "yours" to this key: 404, like another merchant's.
    const yours = (row: AccountRow) => row.merchant_id === owner.merchantId && row.book === owner.book;
    const from = accounts.find((row) => row.id === request.from_account_id && yours(row));
    const to = accounts.find((row) => row.id === request.to_account_id && yours(row));
    if (!from) throw new NotFoundError(`No account ${request.from_account_id} of yours (from_account_id).`);
    if (!to) throw new NotFoundError(`No account ${request.to_account_id} of yours (to_account_id).`);
    if (from.currency !== to.currency) {
      throw new InvalidRequestError(
        `from_account_id holds ${from.currency} and to_account_id holds ${to.currency}; transfers move money between accounts of one currency`,
      );
    }
    const amount = parseTransferAmount(request.amount, from.currency);
    const keyed = keyedRequest(owner.shopId, externalId, {
      from_account_id: from.id,
      to_account_id: to.id,
      amount,
      currency: from.currency,
    });
    const showPrior = async () => {
      const existing = await findTransfer(tx, ledgerId);
      if (!existing)
        throw new Error(`idempotency record of transfer ${externalId} names no ledger transfer ${ledgerId}`);
      return { created: false, transfer: transferView(existing, externalId) };
    };
    return createOrReplay(
      tx,
      deps.clock,
      { rule: BALANCE_TRANSFER_IDEMPOTENCY_RULE, request: keyed, showPrior },
      async (record) => {
        // A transfer made before records existed replays in the ledger itself (same id, same parameters); so does
        // one made through another shop of the merchant (the balance is the merchant's, and so is the external_id).
        const result = await transfer(tx, deps.clock, {
          id: ledgerId,
          debitAccountId: from.id,
          creditAccountId: to.id,
          amount,
          type: 'transfer',
          reference: { type: 'transfer', id: externalId },
        }).catch((error: unknown) => {
          // The ledger's own message names its internal transfer id: the merchant gets the rule's.
          if (error instanceof DuplicateExternalIdError)
            throw new DuplicateExternalIdError(
              `${BALANCE_TRANSFER_IDEMPOTENCY_RULE.conflictMessage} ${SHARED_BY_SHOPS}`,
            );
          throw error;
        });
        await record({ resourceId: result.transferId });
        const view = transferView(result, externalId);
        if (actor && !result.replayed)
          await recordAudit(tx, deps.clock, {
            actor,
            action: 'balance.transferred',
            merchantId: owner.merchantId,
            shopId: owner.shopId,
            target: view.transfer_id,
            details: {
              external_id: externalId,
              from: `${from.currency}:${from.kind}`,
              to: `${to.currency}:${to.kind}`,
              amount: view.amount,
            },
          });
        return { created: !result.replayed, transfer: view };
      },
    );
  });
}

export const OPERATION_TYPES = [
  'payment',
  'deposit',
  'payout',
  'payout_fee',
  'refund',
  'transfer',
  'withdrawal',
  'reversal',
] as const;

export interface OperationView {
  operation_id: string;
  account_id: string;
  transfer_id: string;
  type: string;
  amount: string;
  currency: LedgerCurrency;
  status: TransferStatus;
  balance_after: string;
  reference: { type: string; id: string };
  created_at: string;
}

function operationView(row: OperationListRow): OperationView {
  return {
    operation_id: row.id,
    account_id: row.account_id,
    transfer_id: row.transfer_id,
    type: row.type,
    // A zero-effect entry (listed only while pending) announces an incoming credit: it shows the amount coming.
    amount: formatMinor(
      row.amount === 0n && row.origin_status === 'pending' ? row.origin_amount : row.amount,
      row.currency,
    ),
    currency: row.currency,
    status: row.origin_status === 'pending' ? (row.resolution_status ?? 'pending') : row.origin_status,
    balance_after: formatMinor(row.balance_after, row.currency),
    reference: { type: row.reference_type, id: row.reference_id },
    created_at: row.created_at.toISOString(),
  };
}

export interface OperationQuery {
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly accountId?: string | undefined;
  readonly type?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
}

function parseInstant(text: string | undefined, field: string): Date | undefined {
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || !isStorableInstant(at)) {
    throw new InvalidRequestError(`${field} must be an ISO 8601 timestamp such as 2026-11-01T10:00:00Z`);
  }
  return at;
}

export async function listMerchantOperations(
  deps: BalanceDeps,
  owner: LedgerOwner,
  query: OperationQuery,
): Promise<{ data: OperationView[]; next_cursor: string | null }> {
  const from = parseInstant(query.from, 'from');
  const to = parseInstant(query.to, 'to');
  if (from && to && from >= to) throw new InvalidRequestError('from must be earlier than to');
  if (query.accountId !== undefined) {
    const [account] = await repository.findAccountsByIds(deps.db, [query.accountId]);
    if (!account || account.merchant_id !== owner.merchantId || account.book !== owner.book)
      throw new NotFoundError(`No account ${query.accountId} of yours.`);
  }
  const rows = await repository.listOperations(deps.db, {
    merchantId: owner.merchantId,
    book: owner.book,
    accountId: query.accountId,
    type: query.type,
    from,
    to,
    beforeSeq: query.cursor === undefined ? undefined : decodeSequenceCursor(query.cursor),
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    data: page.map(operationView),
    next_cursor: rows.length > query.limit && last ? encodeSequenceCursor(last.seq) : null,
  };
}
