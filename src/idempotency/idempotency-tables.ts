// Tables the idempotency module owns.
export interface IdempotencyTables {
  idempotency_records: {
    shop_id: string;
    operation: string;
    key: string;
    request_hash: string;
    state: 'in_progress' | 'completed';
    lease_token: string;
    locked_until: Date;
    response_status: number | null;
    response_body: string | null;
    resource_id: string | null;
    created_at: Date;
    expires_at: Date | null;
  };
}
