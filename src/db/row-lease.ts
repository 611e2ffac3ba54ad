// A leader lease kept in a row keyed by chain: one process at a time holds it
// (leader_token), until lease_until; a crashed holder's lease runs out. The
// chain watcher and the sending executor each keep theirs in a table of their own.
import { sql } from 'kysely';
import type { Executor } from './transaction.ts';

/** The columns a lease row has. */
interface LeaseColumns {
  chain: string;
  leader_token: string | null;
  lease_until: Date | null;
}

export interface LeaseClaim {
  readonly chain: string;
  readonly token: string;
  readonly now: Date;
  readonly until: Date;
}

/**
 * Takes or renews the lease; true when this token holds it until `until`.
 * `stampUpdatedAt`: the table has an updated_at column, set to `now`.
 */
export async function takeRowLease<Tables extends Record<Table, LeaseColumns>, Table extends keyof Tables & string>(
  db: Executor<Tables>,
  table: Table,
  claim: LeaseClaim,
  stampUpdatedAt = false,
): Promise<boolean> {
  const stamp = stampUpdatedAt ? sql`, "updated_at" = ${claim.now}` : sql``;
  const result = await sql`update ${sql.table(table)}
     set "leader_token" = ${claim.token}, "lease_until" = ${claim.until}${stamp}
   where "chain" = ${claim.chain}
     and ("leader_token" is null or "leader_token" = ${claim.token} or "lease_until" <= ${claim.now})
  returning "chain"`.execute(db);
  return result.rows.length > 0;
}

/** Gives the lease up, if this token still holds it. */
export async function releaseRowLease<Tables extends Record<Table, LeaseColumns>, Table extends keyof Tables & string>(
  db: Executor<Tables>,
  table: Table,
  chain: string,
  token: string,
): Promise<void> {
  await sql`update ${sql.table(table)} set "leader_token" = null, "lease_until" = null
   where "chain" = ${chain} and "leader_token" = ${token}`.execute(db);
}
