// The Kysely view of every table. Each module declares the tables it owns in
// its own `*-tables.ts`; this file only joins them into one database type.
import type { AuditTables } from '../audit/audit-tables.ts';
import type { RetentionTables } from '../retention/retention-tables.ts';
import type { CabinetTables } from '../cabinet/cabinet-tables.ts';
import type { MerchantTables } from '../merchants/merchant-tables.ts';
import type { PaymentTables } from '../payments/payment-tables.ts';
import type { WebhookTables } from '../webhooks/webhook-tables.ts';
import type { LedgerTables } from '../ledger/ledger-tables.ts';
import type { IdempotencyTables } from '../idempotency/idempotency-tables.ts';
import type { CryptoReceivingTables } from '../crypto/receiving/receiving-tables.ts';
import type { PayoutTables } from '../crypto/payouts/payouts-tables.ts';
import type { SendingTables } from '../crypto/sending/sending-tables.ts';
import type { OutflowTables } from '../crypto/sending/outflow-tables.ts';
import type { SweepingTables } from '../crypto/sweeping/sweeping-tables.ts';
import type { RefundTables } from '../crypto/refunds/refunds-tables.ts';
import type { WithdrawalTables } from '../crypto/withdrawals/withdrawals-tables.ts';
import type { CustodyTables } from '../crypto/custody/custody-tables.ts';
import type { SigningKeyTables } from '../crypto/keys/signing-key-tables.ts';
import type { ColdStorageTables } from '../crypto/cold-storage/cold-storage-tables.ts';
import type { EnergyTables } from '../crypto/energy/energy-tables.ts';

interface MigrationTables {
  schema_migrations: { version: string; applied_at: Date };
}

export interface Database
  extends
    MigrationTables,
    MerchantTables,
    WebhookTables,
    PaymentTables,
    LedgerTables,
    IdempotencyTables,
    CryptoReceivingTables,
    SendingTables,
    SweepingTables,
    PayoutTables,
    RefundTables,
    WithdrawalTables,
    CustodyTables,
    SigningKeyTables,
    ColdStorageTables,
    EnergyTables,
    OutflowTables,
    CabinetTables,
    AuditTables,
    RetentionTables {}
