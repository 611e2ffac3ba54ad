// `node bench/cabinet-plans.ts`: EXPLAIN (ANALYZE, BUFFERS) of each query behind the
// cabinet's tables (bench/cabinet-list-queries.ts) on a database bench:cabinet loaded
// and kept (BENCH_CABINET_DATABASE_URL): per query its execution time (median of 3),
// the scans of its plan, and whether any of them reads a whole table (Seq Scan).
// How migration 0038's indexes were chosen and measured (docs/performance.md, "Cabinet").
import pg from 'pg';
import { cabinetListQueries, SAMPLE_SQL, type ListQuerySample } from './cabinet-list-queries.ts';

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: PlanNode[];
}

/** The scans of a plan, as `Index Scan payments_shop_created_idx` or `Seq Scan payments`. */
export function scansOf(node: PlanNode): string[] {
  const own = node['Relation Name'] ? [`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`] : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}

export async function sampleOfShop(client: pg.Client, shopId: string, merchantId: string): Promise<ListQuerySample> {
  const { rows } = await client.query<{
    payment_id: string;
    payment_created_at: Date;
    order_id: string;
    invoice_external_id: string;
    invoice_address: string;
    wallet_client_id: string;
    deposit_id: string;
    deposit_tx_hash: string;
    deposit_address: string;
    deposit_seen_at: Date;
    operation_seq: string;
  }>(SAMPLE_SQL, [shopId]);
  const row = rows[0];
  if (!row) throw new Error(`shop ${shopId} has no rows to sample`);
  const middle = row.payment_created_at.getTime();
  return {
    shopId,
    merchantId,
    paymentId: row.payment_id,
    paymentCreatedAt: row.payment_created_at,
    orderId: row.order_id,
    invoiceExternalId: row.invoice_external_id,
    invoiceAddress: row.invoice_address,
    walletClientId: row.wallet_client_id,
    depositId: row.deposit_id,
    depositTxHash: row.deposit_tx_hash,
    depositAddress: row.deposit_address,
    depositSeenAt: row.deposit_seen_at,
    operationSeq: row.operation_seq,
    from: new Date(middle - 15 * 86_400_000),
    to: new Date(middle + 15 * 86_400_000),
  };
}

if (import.meta.main) {
  const url = process.env.BENCH_CABINET_DATABASE_URL;
  if (!url) throw new Error('set BENCH_CABINET_DATABASE_URL to a database bench:cabinet loaded (BENCH_CABINET_KEEP=1)');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ shop_id: string; merchant_id: string }>(
      `select s.id as shop_id, s.merchant_id from shops s join payments p on p.shop_id = s.id group by s.id order by count(*) desc limit 1`,
    );
    const sample = await sampleOfShop(client, rows[0]!.shop_id, rows[0]!.merchant_id);
    for (const query of cabinetListQueries(sample)) {
      const times: number[] = [];
      let scans: string[] = [];
      for (let run = 0; run < 3; run += 1) {
        const result = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>(
          `explain (analyze, buffers, format json) ${query.sql}`,
          [...query.params],
        );
        const plan = result.rows[0]!['QUERY PLAN'][0]!;
        times.push(plan['Execution Time']);
        scans = scansOf(plan.Plan);
      }
      times.sort((a, b) => a - b);
      const whole = scans.some((scan) => scan.startsWith('Seq Scan'));
      process.stdout.write(
        `${query.name.padEnd(26)} ${times[1]!.toFixed(1).padStart(8)} ms  ${whole ? 'SEQ SCAN ' : ''}${scans.join(', ')}\n`,
      );
    }
  } finally {
    await client.end();
  }
}
