// The audit log ages out by month (docs/operations.md, "Retention and archive"):
// migration 0046 partitions audit_events by month of created_at, and a month is
// archived and its partition dropped once `monthsKept` whole months have passed.
import { monthlyPartitionSource } from '../retention/monthly-partitions.ts';
import type { RetentionSource } from '../retention/retention-source.ts';

export function auditRetentionSource(monthsKept: number | undefined): RetentionSource {
  return monthlyPartitionSource('audit_events', monthsKept);
}
