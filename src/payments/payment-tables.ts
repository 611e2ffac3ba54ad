// Kysely types of the tables the payments module owns (migration 0003_payments.sql).
export type PaymentStatus = 'pending' | 'paid' | 'failed' | 'expired';
export const PAYMENT_STATUSES: readonly PaymentStatus[] = ['pending', 'paid', 'failed', 'expired'];

export type PaymentMethod = 'card' | 'sbp' | 'sberpay';
export const PAYMENT_METHODS: readonly PaymentMethod[] = ['card', 'sbp', 'sberpay'];

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
  payment_idempotency_keys: {
    shop_id: string;
    idempotency_key: string;
    request_hash: string;
    state: 'in_progress' | 'completed';
    lease_token: string;
    locked_until: Date;
    response_status: number | null;
    response_body: string | null;
    payment_id: string | null;
    created_at: Date;
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
}
