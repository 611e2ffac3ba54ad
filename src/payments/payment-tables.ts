// Kysely types of the tables the payments module owns (migrations 0003_payments.sql, 0007_payment_attempts.sql,
// 0042_payment_refunds.sql, 0043_acquirer_connections.sql).
import type { Generated } from 'kysely';
export type PaymentStatus = 'pending' | 'paid' | 'failed' | 'expired';

export type PaymentMethod = 'card' | 'sbp' | 'sberpay';
export const PAYMENT_METHODS: readonly PaymentMethod[] = ['card', 'sbp', 'sberpay'];

/**
 * pending, requires_confirmation and requires_action (the payer is at the acquirer):
 * the outcome is not known yet (the reconciliation worker asks the acquirer).
 */
type PaymentAttemptStatus =
  'pending' | 'requires_confirmation' | 'requires_action' | 'succeeded' | 'declined' | 'abandoned';
/** A merchant's refund of a paid payment: pending until the acquirer's outcome is known. */
export type PaymentRefundStatus = 'pending' | 'succeeded' | 'failed';
/** Why a capture went to suspense instead of paying its payment. */
export type SuspenseReason = 'payment_already_paid' | 'payment_expired' | 'payment_failed';

export interface PaymentTables {
  payments: {
    id: string;
    shop_id: string;
    order_code: string;
    status: PaymentStatus;
    amount_kopecks: bigint;
    amount_total_kopecks: bigint;
    currency: 'RUB';
    method: PaymentMethod | null;
    order_id: string | null;
    callback_url: string | null;
    created_at: Date;
    expires_at: Date;
    paid_at: Date | null;
    paid_method: PaymentMethod | null;
    paid_total_kopecks: bigint | null;
    failed_at: Date | null;
    failure_reason: string | null;
    expired_at: Date | null;
  };
  payment_method_settings: {
    shop_id: string;
    method: PaymentMethod;
    enabled: boolean;
    min_kopecks: bigint;
    max_kopecks: bigint;
    fee_bps: number;
    updated_at: Date;
  };
  sandbox_acquirer_charges: {
    charge_key: string;
    payment_id: string;
    method: string;
    amount_kopecks: bigint;
    card_last4: string | null;
    status: 'succeeded' | 'declined' | 'requires_confirmation' | 'canceled';
    decline_code: string | null;
    created_at: Date;
    updated_at: Date;
  };
  sandbox_acquirer_refunds: {
    refund_key: string;
    charge_key: string;
    amount_kopecks: bigint;
    created_at: Date;
  };
  payment_refunds: {
    id: string;
    payment_id: string;
    shop_id: string;
    attempt_id: string | null;
    connector: string;
    amount_kopecks: bigint;
    reason: string | null;
    status: PaymentRefundStatus;
    failure_reason: string | null;
    provider_refund_reference: string | null;
    next_check_at: Date;
    lookups: Generated<number>;
    created_at: Date;
    updated_at: Date;
    resolved_at: Date | null;
  };
  payment_attempts: {
    id: string;
    payment_id: string;
    charge_key: string;
    connector: string;
    method: PaymentMethod;
    amount_kopecks: bigint;
    status: PaymentAttemptStatus;
    decline_code: string | null;
    applied_as: 'payment' | 'suspense' | null;
    suspense_reason: SuspenseReason | null;
    refund_status: 'requested' | 'refunded' | null;
    refunded_at: Date | null;
    next_check_at: Date;
    lookups: Generated<number>;
    created_at: Date;
    updated_at: Date;
    resolved_at: Date | null;
    provider_reference: Generated<string | null>;
    payer_action_kind: Generated<'redirect' | 'qr' | null>;
    payer_action_url: Generated<string | null>;
    payer_action_qr: Generated<string | null>;
    payer_action_deep_link: Generated<string | null>;
  };
  acquirer_connections: {
    id: string;
    shop_id: string;
    provider: string;
    api_url: string;
    credentials_sealed: string;
    methods: PaymentMethod[];
    priority: number;
    created_at: Date;
    updated_at: Date;
    removed_at: Date | null;
  };
}
