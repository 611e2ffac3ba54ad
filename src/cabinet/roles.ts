// Who may do what in the cabinet: the five roles a membership carries and the one
// table that maps each to its permissions. Every cabinet route names the permission
// it needs (cabinet-route.ts); test/cabinet/route-role-matrix.test.ts checks every
// route against this table for every role.
export const ROLES = ['owner', 'admin', 'developer', 'finance', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export const PERMISSIONS = [
  'shops.read',
  'shops.manage',
  'keys.read',
  'keys.manage',
  'methods.read',
  'methods.manage',
  'webhooks.read',
  'webhooks.manage',
  'webhooks.secret',
  'team.read',
  'team.manage',
  'audit.read',
  'crypto.read',
  'wallets.manage',
  'sandbox.tools',
  'payments.read',
  'balances.read',
  'balances.transfer',
  'exports.create',
  'withdrawals.request',
  'withdrawals.approve',
  'withdrawals.rule',
  'refunds.create',
  'payouts.create',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const EVERYONE: readonly Role[] = ROLES;

/** The one table: which roles hold each permission. */
const ROLES_BY_PERMISSION: Readonly<Record<Permission, readonly Role[]>> = {
  'shops.read': EVERYONE,
  'shops.manage': ['owner', 'admin'],
  'keys.read': ['owner', 'admin', 'developer'],
  'keys.manage': ['owner', 'admin', 'developer'],
  'methods.read': EVERYONE,
  'methods.manage': ['owner', 'admin'],
  'webhooks.read': ['owner', 'admin', 'developer', 'viewer'],
  'webhooks.manage': ['owner', 'admin', 'developer'],
  'webhooks.secret': ['owner', 'admin', 'developer'],
  'team.read': EVERYONE,
  'team.manage': ['owner', 'admin'],
  'audit.read': ['owner', 'admin', 'finance'],
  'crypto.read': EVERYONE,
  'wallets.manage': ['owner', 'admin', 'finance'],
  'sandbox.tools': ['owner', 'admin', 'developer'],
  'payments.read': EVERYONE,
  'balances.read': ['owner', 'admin', 'finance', 'viewer'],
  'balances.transfer': ['owner', 'finance'],
  'exports.create': ['owner', 'admin', 'finance'],
  'withdrawals.request': ['owner', 'finance'],
  'withdrawals.approve': ['owner', 'finance'],
  /** The single-person withdrawal limit: an owner's decision alone. */
  'withdrawals.rule': ['owner'],
  'refunds.create': ['owner', 'admin', 'finance'],
  'payouts.create': ['owner', 'admin', 'finance'],
};

export function roleCan(role: Role, permission: Permission): boolean {
  return ROLES_BY_PERMISSION[permission].includes(role);
}

/** Roles that must have a second factor before any money action (docs/cabinet.md). */
export const ROLES_NEEDING_SECOND_FACTOR: readonly Role[] = ['owner', 'admin', 'finance'];
