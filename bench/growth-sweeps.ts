// The sweeps of bench:growth's year (bench/growth-loader.ts). A running gateway's
// sweeper moves each deposit's USDT to the hot wallet minutes after it becomes
// final (src/crypto/sweeping/), so a year-old database holds a completed sweep for
// every deposit but the newest. Each is the sweeper's own rows on the burn path: a
// `gas_topup` of the TRX the USDT transfer burns, from the hot wallet (on the
// address's first sweep it also creates the address), then the `sweep` of the
// deposit's USDT to the hot wallet, both confirmed in the history's blocks, and a
// `completed` crypto_sweeps row holding both transfers' ids and fees. A sweep books
// no ledger money; the executor books its TRX as a chain cost (network_fees →
// network_costs), left out here as for the loaded payouts: neither account is the
// hot_wallet one custody reads. The signed transactions (crypto_outgoing_attempts)
// are left out too. Deposits final within the last `unsweptSeconds` stay unswept:
// the custody check reads those addresses, and `loadedCustody` says what the chain
// must hold for the check to balance.
import { historyBlock } from './cabinet-loader.ts';

/** The USDT transfer to the hot wallet (which holds USDT), as the chain estimates it: energy, bandwidth, TRX burnt. */
const SWEEP_ENERGY = 31_895;
const SWEEP_BANDWIDTH = 345;
const SWEEP_BURN_SUN = 3_534_500;
/** The top-up's own cost to the hot wallet: its bandwidth, and the account's creation on the address's first top-up. */
const TOPUP_FEE_SUN = 268_000;
const CREATION_FEE_SUN = 100_000;

export interface GrowthSweeps {
  /** The sandbox hot wallet of the loaded database's key: where every sweep sends the USDT. */
  readonly hotWallet: string;
  /** Deposits final this recently before the load stay unswept (a day by default: the sweeper's backlog, a few thousand at scale 1). */
  readonly unsweptSeconds: number;
}

/** The statement that writes every sweep of `shopIds`' deposits final before the unswept window. */
export function sweepStatement(
  shopIds: readonly string[],
  sweeps: GrowthSweeps,
  nowIso: string,
): { label: string; sql: string } {
  const shops = `(${shopIds.map((id) => `'${id}'`).join(', ')})`;
  const now = `'${nowIso}'::timestamptz`;
  const hash = (salt: string) => `substr(md5('${salt}' || s.deposit_id), 1, 26)`;
  const tx = (salt: string) => `md5('${salt}a' || s.deposit_id) || md5('${salt}b' || s.deposit_id)`;
  return {
    label: 'sweeps',
    sql: `
     with swept as materialized (
       select d.id as deposit_id, d.address, d.amount_micro, a.derivation_index,
              lag(d.id) over (partition by d.address order by d.final_at, d.id) is not null as activated_before,
              d.final_at + interval '1 minute' as created_at
         from crypto_deposits d join crypto_addresses a on a.address = d.address
        where d.shop_id in ${shops} and d.status in ('credited', 'held')
          and d.final_at <= ${now} - make_interval(secs => ${sweeps.unsweptSeconds})
     ), s as materialized (
       select swept.*, 'swp_' || substr(md5('sweep' || deposit_id), 1, 26) as sweep_id,
              ${historyBlock(now, "created_at + interval '30 seconds'")} as topup_block,
              ${historyBlock(now, "created_at + interval '90 seconds'")} as sweep_block
         from swept
     ), topups as (
       insert into crypto_outgoing_transfers (id, chain, purpose, owner_id, asset, from_kind, to_address, amount, status, tx_id, attempts,
                                              fee_sun, block_number, created_at, updated_at, submitted_at, final_at)
       select 'otx_' || ${hash('topup')}, 'tron-sandbox', 'gas_topup', s.sweep_id, 'TRX', 'hot_wallet', s.address, ${SWEEP_BURN_SUN},
              'confirmed', ${tx('topup')}, 1, ${TOPUP_FEE_SUN} + case when s.activated_before then 0 else ${CREATION_FEE_SUN} end,
              s.topup_block, s.created_at, s.created_at + interval '30 seconds', s.created_at + interval '3 seconds', s.created_at + interval '30 seconds'
         from s
     ), transfers as (
       insert into crypto_outgoing_transfers (id, chain, purpose, owner_id, asset, from_kind, from_address, from_derivation_index, to_address,
                                              amount, status, tx_id, attempts, fee_sun, block_number, created_at, updated_at, submitted_at, final_at)
       select 'otx_' || ${hash('sweep')}, 'tron-sandbox', 'sweep', s.sweep_id, 'USDT', 'deposit_address', s.address, s.derivation_index,
              '${sweeps.hotWallet}', s.amount_micro, 'confirmed', ${tx('sweep')}, 1, ${SWEEP_BURN_SUN}, s.sweep_block,
              s.created_at + interval '30 seconds', s.created_at + interval '90 seconds', s.created_at + interval '33 seconds', s.created_at + interval '90 seconds'
         from s
     )
     insert into crypto_sweeps (id, chain, address, status, unswept_final_micro, energy, bandwidth, estimated_fee_sun, trx_before_sun,
                                activated_before, topup_sun, topup_transfer_id, topup_fee_sun, amount_micro, sweep_transfer_id, sweep_fee_sun,
                                tx_hash, created_at, updated_at, final_at)
     select s.sweep_id, 'tron-sandbox', s.address, 'completed', s.amount_micro, ${SWEEP_ENERGY}, ${SWEEP_BANDWIDTH}, ${SWEEP_BURN_SUN}, 0,
            s.activated_before, ${SWEEP_BURN_SUN}, 'otx_' || ${hash('topup')},
            ${TOPUP_FEE_SUN} + case when s.activated_before then 0 else ${CREATION_FEE_SUN} end,
            s.amount_micro, 'otx_' || ${hash('sweep')}, ${SWEEP_BURN_SUN}, ${tx('sweep')},
            s.created_at, s.created_at + interval '90 seconds', s.created_at + interval '90 seconds'
       from s`,
  };
}

/** What the chain must hold for the loaded history: each unswept address its final deposits less its sweeps, the hot wallet the rest. */
export interface LoadedCustody {
  /** Swept USDT less the USDT the hot wallet paid out (micro-USDT). */
  readonly hotWalletMicro: bigint;
  /** The addresses holding unswept USDT, and how much (micro-USDT). */
  readonly unswept: ReadonlyArray<{ readonly address: string; readonly micro: bigint }>;
}

/** Runs one statement and gives its rows: a pg client's or a Kysely database's, whichever the caller has. */
type RowsOf = (text: string) => Promise<{ readonly rows: readonly unknown[] }>;

export async function loadedCustody(rowsOf: RowsOf): Promise<LoadedCustody> {
  const hot = (await rowsOf(`
    select ((select coalesce(sum(amount), 0) from crypto_outgoing_transfers where purpose = 'sweep' and status = 'confirmed')
          - (select coalesce(sum(amount), 0) from crypto_outgoing_transfers
              where from_kind = 'hot_wallet' and asset = 'USDT' and status = 'confirmed'))::text as micro`)) as {
    rows: Array<{ micro: string }>;
  };
  const unswept = (await rowsOf(`
    select f.address, (f.final_micro - coalesce(s.swept_micro, 0))::text as micro
      from (select address, sum(amount_micro) as final_micro from crypto_deposits where status in ('credited', 'held') group by address) f
      left join (select address, sum(amount_micro) as swept_micro from crypto_sweeps where status = 'completed' group by address) s
        on s.address = f.address
     where f.final_micro > coalesce(s.swept_micro, 0)
     order by f.address`)) as { rows: Array<{ address: string; micro: string }> };
  return {
    hotWalletMicro: BigInt(hot.rows[0]!.micro),
    unswept: unswept.rows.map((row) => ({ address: row.address, micro: BigInt(row.micro) })),
  };
}
