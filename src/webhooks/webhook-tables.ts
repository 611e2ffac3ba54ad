import type { Generated } from 'kysely';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type AttemptOutcome = 'succeeded' | 'http_error' | 'timeout' | 'connection_error' | 'refused';

export interface WebhookTables {
  /** A shop's endpoint and signing secrets, sealed (migration 0011). */
  webhook_endpoints: {
    shop_id: string;
    webhook_url: string | null;
    webhook_secret: string;
    previous_webhook_secret: string | null;
    previous_webhook_secret_expires_at: Date | null;
  };
  webhook_events: {
    id: string;
    shop_id: string;
    type: string;
    /** The exact JSON body sent; signatures cover these bytes. */
    payload: string;
    destination_url: string | null;
    created_at: Date;
    /** The ids of the objects the event is about, as the outbox read them from its data (migration 0035). */
    subject_ids: Generated<string[]>;
    /** The writing transaction's id (xid8, as text), the stream's order (migration 0044); null for events written before. */
    tx_id: Generated<string | null>;
  };
  webhook_deliveries: {
    id: string;
    event_id: string;
    shop_id: string;
    url: string;
    status: Generated<DeliveryStatus>;
    attempt_count: Generated<number>;
    max_attempts: number;
    next_attempt_at: Date | null;
    locked_until: Date | null;
    lease_token: string | null;
    last_attempt_at: Date | null;
    created_at: Date;
    updated_at: Date;
  };
  webhook_attempts: {
    id: string;
    delivery_id: string;
    event_id: string;
    attempt_number: number;
    url: string;
    started_at: Date;
    duration_ms: number;
    outcome: AttemptOutcome;
    status_code: number | null;
    error: string | null;
    response_body: string | null;
    next_retry_at: Date | null;
  };
}
