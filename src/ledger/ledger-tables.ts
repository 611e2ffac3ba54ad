// The Kysely types of the ledger's tables (src/db/migrations/0004_ledger.sql).
// Only src/ledger/ writes them; other modules call src/ledger/ledger-service.ts.
import type { Generated } from 'kysely';
import type { Asset } from '../money/asset.ts';

/** The ledger's currencies are the money module's assets. */
export type LedgerCurrency = Asset;
export const LEDGER_CURRENCIES: readonly LedgerCurrency[] = ['RUB', 'USDT'];

/** Merchant kinds are `main` and `payout`; the gateway's own accounts are `fees`, `settlement`, `hot_wallet`, `suspense`. */
export type MerchantAccountKind = 'main' | 'payout';
export const MERCHANT_ACCOUNT_KINDS: readonly MerchantAccountKind[] = ['main', 'payout'];
/** network_fees: network fees charged minus chain costs spent; network_costs: what outgoing transactions burned (migration 0019). */
export type SystemAccountKind = 'fees' | 'settlement' | 'hot_wallet' | 'suspense' | 'network_fees' | 'network_costs';
export type AccountKind = MerchantAccountKind | SystemAccountKind;

export type TransferStatus = 'pending' | 'posted' | 'voided';

/** Sandbox and live money live in separate books (a shop's mode); no transfer crosses them (migration 0010). */
export type LedgerBook = 'sandbox' | 'live';

export interface LedgerTables {
  ledger_accounts: {
    id: string;
    book: LedgerBook;
    merchant_id: string | null;
    currency: LedgerCurrency;
    kind: AccountKind;
    /** Gateway accounts are split into shards so that no single row serializes every payment (migration 0009). */
    shard: Generated<number>;
    debits_must_not_exceed_credits: boolean;
    debits_pending: Generated<bigint>;
    debits_posted: Generated<bigint>;
    credits_pending: Generated<bigint>;
    credits_posted: Generated<bigint>;
    created_at: Date;
  };
  ledger_transfers: {
    id: string;
    idempotency_key: string;
    debit_account_id: string;
    credit_account_id: string;
    amount: bigint;
    currency: LedgerCurrency;
    type: string;
    reference_type: string;
    reference_id: string;
    status: TransferStatus;
    pending_id: string | null;
    chain_id: string;
    created_at: Date;
    /** Reservations only: how long it may stay open, and when that runs out (migration 0008). */
    timeout_seconds: number | null;
    expires_at: Date | null;
  };
  ledger_operations: {
    seq: Generated<bigint>;
    id: string;
    account_id: string;
    transfer_id: string;
    origin_id: string;
    amount: bigint;
    balance_after: bigint;
    created_at: Date;
    /** The originating transfer's type, written with the entry (migration 0039, which filled in the older entries). */
    type: string | null;
  };
}
