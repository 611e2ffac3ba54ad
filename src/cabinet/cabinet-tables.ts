import type { Generated } from 'kysely';
import type { Role } from './roles.ts';

/** The cabinet's own tables (migration 0031): its people, their sessions, invitations and resets. */
export interface CabinetTables {
  users: {
    id: string;
    email: string;
    name: Generated<string>;
    password_hash: string | null;
    totp_secret_sealed: string | null;
    totp_enabled_at: Date | null;
    totp_last_step: string | null;
    disabled_at: Date | null;
    created_at: Date;
  };
  memberships: {
    user_id: string;
    merchant_id: string;
    role: Role;
    created_at: Date;
  };
  user_recovery_codes: {
    user_id: string;
    code_hash: Uint8Array;
    used_at: Date | null;
  };
  cabinet_sessions: {
    id: string;
    token_hash: Uint8Array;
    user_id: string;
    merchant_id: string | null;
    csrf_token: string;
    pending_second_factor: Generated<boolean>;
    stepped_up_at: Date | null;
    ip: Generated<string>;
    user_agent: Generated<string>;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
    ended_at: Date | null;
  };
  cabinet_invites: {
    id: string;
    token_hash: Uint8Array;
    merchant_id: string;
    email: string;
    role: Role;
    invited_by: string;
    created_at: Date;
    expires_at: Date;
    accepted_at: Date | null;
    revoked_at: Date | null;
  };
  cabinet_password_resets: {
    token_hash: Uint8Array;
    user_id: string;
    created_at: Date;
    expires_at: Date;
    used_at: Date | null;
  };
  cabinet_sign_in_failures: {
    subject: string;
    failures: number;
    last_failed_at: Date;
    locked_until: Date | null;
  };
}
