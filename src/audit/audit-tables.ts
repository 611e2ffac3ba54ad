import type { Generated, JSONColumnType } from 'kysely';

export type AuditActorKind = 'user' | 'api_key' | 'operator' | 'system';

/** The audit module's table (migration 0032): append-only, one row per audited action. */
export interface AuditTables {
  audit_events: {
    id: string;
    merchant_id: string | null;
    shop_id: string | null;
    actor_kind: AuditActorKind;
    actor_id: string | null;
    actor_label: Generated<string>;
    action: string;
    target: string | null;
    ip: Generated<string>;
    user_agent: Generated<string>;
    details: JSONColumnType<Record<string, unknown>, string, string>;
    created_at: Date;
  };
}
