// Kysely types of the tables custody reconciliation owns (migration 0027_crypto_custody_reconciliations.sql).
import type { LedgerBook } from '../../ledger/ledger-service.ts';

/** The assets reconciled: USDT only (TRX is the gateway's own fuel, owed to nobody; docs/custody.md). */
export type CustodyAsset = 'USDT';
type ReconciliationOutcome = 'balanced' | 'shortfall' | 'failed';

export interface CustodyTables {
  crypto_custody_reconciliations: {
    id: string;
    book: LedgerBook;
    asset: CustodyAsset;
    outcome: ReconciliationOutcome;
    started_at: Date;
    finished_at: Date;
    solidified_block: bigint | null;
    hot_wallet_micro: bigint | null;
    deposit_addresses_micro: bigint | null;
    addresses_read: number;
    deposits_credited_micro: bigint | null;
    deposits_above_block_micro: bigint | null;
    outgoing_booked_micro: bigint | null;
    outgoing_in_flight_micro: bigint | null;
    sweeps_in_flight_micro: bigint | null;
    merchant_balances_micro: bigint | null;
    reserved_outgoing_micro: bigint | null;
    gateway_fees_micro: bigint | null;
    expected_micro: bigint | null;
    difference_micro: bigint | null;
    shortfall_micro: bigint | null;
    accepted_shortfall_micro: bigint;
    tolerance_micro: bigint;
    error_message: string | null;
  };
  crypto_custody_books: {
    book: LedgerBook;
    asset: CustodyAsset;
    paused_since: Date | null;
    paused_by_reconciliation: string | null;
    accepted_shortfall_micro: bigint;
    updated_at: Date;
  };
  crypto_custody_acknowledgements: {
    id: string;
    book: LedgerBook;
    asset: CustodyAsset;
    reconciliation_id: string;
    accepted_shortfall_micro: bigint;
    acknowledged_by: string;
    note: string | null;
    acknowledged_at: Date;
  };
}
