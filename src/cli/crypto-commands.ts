// `paygate crypto addresses`: the custody view of our deposit addresses
// (crypto/receiving/custody-service.ts), reading balances from the chain of
// each address's key: the configured TRON nodes for live addresses, the saved
// sandbox chain of the data folder for sandbox ones. `paygate crypto sweeps
// list|retry`: an address's sweep attempts, and an operator's retry of a stuck one.
// `paygate crypto settings`: a shop's receiving settings (its minimum deposit).
// `paygate crypto deposits unconfirmed|release`: deposits held for want of a
// second confirmation, and an operator's release of one. `paygate crypto costs`:
// what outgoing transfers cost per day (crypto/sending/transfer-costs.ts).
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { readOnlyChainModule } from './read-only-chain.ts';
import { printTable, type Column } from './table.ts';
import { CUSTODY_PAGE_MAX, listCustodyAddresses, type CustodyLine } from '../crypto/receiving/custody-service.ts';
import { sweepSummaries } from '../crypto/sweeping/sweep-custody.ts';
import {
  minimumDepositOfShop,
  parseMinimumDeposit,
  setMinimumDepositOfShop,
} from '../crypto/receiving/deposit-dust.ts';
import { InvalidRequestError } from '../errors.ts';
import { releaseUnconfirmedDeposit } from '../crypto/receiving/deposit-settlement.ts';
import { unconfirmedDeposits } from '../crypto/receiving/receiving-service.ts';
import { depositView, usdtText, type DepositView } from '../crypto/receiving/receiving-views.ts';
import { inTransaction } from '../db/transaction.ts';
import { COST_DAYS_MAX, costsOfLastDays, type DailyCostRow } from '../crypto/sending/transfer-costs.ts';
import {
  retrySweepsOfAddress,
  sweepsOfAddress,
  sweepView,
  type SweepView,
} from '../crypto/sweeping/sweeping-service.ts';

const ADDRESS_COLUMNS: readonly Column<CustodyLine>[] = [
  { header: 'ADDRESS', value: (entry) => entry.address },
  { header: 'KEY/INDEX', value: (entry) => `${entry.key}/${entry.derivation_index}` },
  { header: 'PURPOSE', value: (entry) => entry.purpose },
  { header: 'SHOP', value: (entry) => entry.shop_id },
  { header: 'USDT ON CHAIN', value: (entry) => entry.usdt_on_chain, align: 'right' },
  { header: 'TRX', value: (entry) => entry.trx_on_chain, align: 'right' },
  { header: 'CREDITED', value: (entry) => entry.usdt_credited, align: 'right' },
  { header: 'HELD', value: (entry) => entry.usdt_held, align: 'right' },
  { header: 'DUST', value: (entry) => entry.usdt_ignored_dust, align: 'right' },
  { header: 'SWEPT', value: (entry) => entry.usdt_swept, align: 'right' },
  { header: 'PENDING', value: (entry) => entry.usdt_sweep_pending, align: 'right' },
  { header: 'STUCK', value: (entry) => entry.usdt_sweep_stuck, align: 'right' },
  { header: 'UNACCOUNTED', value: (entry) => entry.usdt_unaccounted, align: 'right' },
  {
    header: 'SWEEP',
    value: (entry) => `${entry.sweep_state}${entry.sweep_error === null ? '' : ` (${entry.sweep_error})`}`,
  },
];

export const cryptoAddressesCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        shop: { type: 'string' },
        limit: { type: 'string' },
        after: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > CUSTODY_PAGE_MAX)
      throw new CliUsageError(`--limit must be 1..${CUSTODY_PAGE_MAX}`);
    const lines = await withCliContext(config, async (context) => {
      const chain = readOnlyChainModule(config, context, context);
      try {
        return await listCustodyAddresses(
          { ...context, chain: chain.service },
          { limit, after: values.after, shopId: values.shop },
          sweepSummaries,
        );
      } finally {
        await chain.module.close();
      }
    });
    if (values.json) io.out(JSON.stringify(lines));
    else printTable(io.out, lines, ADDRESS_COLUMNS, 'no deposit addresses');
    return 0;
  },
};

function addressArgument(args: string[]): { address: string; json: boolean } {
  const { values } = parseArgs({
    args,
    options: { address: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (values.address === undefined || !/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(values.address))
    throw new CliUsageError('--address must be one of our TRON deposit addresses');
  return { address: values.address, json: values.json };
}

const SWEEP_COLUMNS: readonly Column<SweepView>[] = [
  { header: 'SWEEP', value: (view) => view.sweep_id },
  { header: 'STATUS', value: (view) => view.status },
  { header: 'MOVED USDT', value: (view) => view.usdt_moved ?? '-', align: 'right' },
  { header: 'OF USDT', value: (view) => view.usdt_unswept_final, align: 'right' },
  { header: 'TOP-UP TRX', value: (view) => view.trx_topup, align: 'right' },
  { header: 'TOP-UP FEE', value: (view) => view.trx_topup_fee ?? '-', align: 'right' },
  { header: 'SWEEP FEE TRX', value: (view) => view.trx_sweep_fee ?? '-', align: 'right' },
  { header: 'DELEGATED TRX', value: (view) => view.trx_delegated ?? '-', align: 'right' },
  { header: 'UNDELEGATION', value: (view) => view.undelegation ?? '-' },
  { header: 'CREATED', value: (view) => view.created_at },
  {
    header: 'ERROR',
    value: (view) =>
      view.error === null ? '' : `${view.error.code}${view.cleared ? ' (cleared)' : ''}: ${view.error.message ?? ''}`,
  },
];

export const cryptoSweepsListCommand: CliCommand = {
  async run(args, io, config) {
    const { address, json } = addressArgument(args);
    const views = await withCliContext(config, async (context) =>
      (await sweepsOfAddress(context.db, address)).map(sweepView),
    );
    if (json) io.out(JSON.stringify(views));
    else printTable(io.out, views, SWEEP_COLUMNS, 'no sweep attempts');
    return 0;
  },
};

export const cryptoSweepsRetryCommand: CliCommand = {
  async run(args, io, config) {
    const { address } = addressArgument(args);
    const cleared = await withCliContext(config, (context) => retrySweepsOfAddress(context, address));
    io.out(
      cleared === 0
        ? `${address}: no failed sweeps to clear`
        : `${address}: ${cleared} failed sweep(s) cleared; the sweeper tries again within a minute`,
    );
    return 0;
  },
};

export const cryptoSettingsCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        shop: { type: 'string' },
        'min-deposit': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const shopId = values.shop;
    if (shopId === undefined || shopId.trim() === '') throw new CliUsageError('--shop is required');
    let minimumMicro: bigint | undefined;
    if (values['min-deposit'] !== undefined) {
      try {
        minimumMicro = parseMinimumDeposit(values['min-deposit']);
      } catch (error) {
        if (error instanceof InvalidRequestError) throw new CliUsageError(`--min-deposit: ${error.message}`);
        throw error;
      }
    }
    const current = await withCliContext(config, async (context) => {
      if (minimumMicro !== undefined) await setMinimumDepositOfShop(context, shopId, minimumMicro);
      return minimumDepositOfShop(context.db, shopId);
    });
    if (values.json) io.out(JSON.stringify({ shop_id: shopId, min_deposit: usdtText(current) }));
    else io.out(`shop ${shopId}: minimum deposit ${usdtText(current)} USDT (smaller transfers are ignored as dust)`);
    return 0;
  },
};

const UNCONFIRMED_LIST_MAX = 1_000;

type UnconfirmedView = DepositView & { readonly chain: string; readonly address: string; readonly evidence: string };

const UNCONFIRMED_COLUMNS: readonly Column<UnconfirmedView>[] = [
  { header: 'DEPOSIT', value: (deposit) => deposit.deposit_id },
  { header: 'CHAIN', value: (deposit) => deposit.chain },
  { header: 'USDT', value: (deposit) => deposit.amount, align: 'right' },
  { header: 'TO', value: (deposit) => deposit.address },
  { header: 'FROM', value: (deposit) => deposit.from_address },
  { header: 'TX:LOG', value: (deposit) => `${deposit.tx_id}:${deposit.log_index}` },
  { header: 'BLOCK', value: (deposit) => String(deposit.block_number), align: 'right' },
  { header: 'EVIDENCE', value: (deposit) => deposit.evidence },
];

export const cryptoDepositsUnconfirmedCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { limit: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > UNCONFIRMED_LIST_MAX)
      throw new CliUsageError(`--limit must be 1..${UNCONFIRMED_LIST_MAX}`);
    const rows = await withCliContext(config, (context) => unconfirmedDeposits(context.db, limit));
    const views = rows.map((row) => ({
      ...depositView(row),
      chain: row.chain,
      address: row.address,
      evidence: row.evidence,
    }));
    if (values.json) io.out(JSON.stringify(views));
    else printTable(io.out, views, UNCONFIRMED_COLUMNS, 'no unconfirmed deposits');
    return 0;
  },
};

export const cryptoDepositsReleaseCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { deposit: { type: 'string' } } });
    const depositId = values.deposit?.trim();
    if (!depositId) throw new CliUsageError('--deposit is required');
    const released = await withCliContext(config, (context) =>
      inTransaction(context.db, (tx) => releaseUnconfirmedDeposit(tx, context.clock, depositId)),
    );
    if (released === undefined) {
      io.err(`${depositId}: no unconfirmed deposit with this id`);
      return 1;
    }
    io.out(`${depositId}: ${released.status} (${usdtText(released.amount_micro)} USDT to ${released.address})`);
    return 0;
  },
};

/** One day of one chain's outgoing costs, as `paygate crypto costs` prints it (TRX and USDT as decimal strings). */
interface DailyCostView {
  readonly day: string;
  readonly chain: string;
  readonly transfers: number;
  readonly energy_used: string;
  readonly energy_staked: string;
  readonly energy_delegated: string;
  readonly energy_rented: string;
  readonly energy_burned: string;
  readonly energy_mixed: string;
  readonly bandwidth_used: string;
  readonly trx_burned: string;
  readonly trx_rented: string;
  readonly cost_usdt: string;
}

function dailyCostView(row: DailyCostRow): DailyCostView {
  // TRX has USDT's 6 decimals: sun print as micro-USDT do.
  return {
    day: row.day,
    chain: row.chain,
    transfers: Number(row.transfers),
    energy_used: row.energy_used.toString(),
    energy_staked: row.energy_staked.toString(),
    energy_delegated: row.energy_delegated.toString(),
    energy_rented: row.energy_rented.toString(),
    energy_burned: row.energy_burned_source.toString(),
    energy_mixed: row.energy_mixed.toString(),
    bandwidth_used: row.bandwidth_used.toString(),
    trx_burned: usdtText(row.energy_fee_sun + row.bandwidth_fee_sun),
    trx_rented: usdtText(row.rental_sun),
    cost_usdt: usdtText(row.cost_micro),
  };
}

const COST_COLUMNS: readonly Column<DailyCostView>[] = [
  { header: 'DAY', value: (row) => row.day },
  { header: 'CHAIN', value: (row) => row.chain },
  { header: 'TRANSFERS', value: (row) => String(row.transfers), align: 'right' },
  { header: 'ENERGY', value: (row) => row.energy_used, align: 'right' },
  { header: 'STAKED', value: (row) => row.energy_staked, align: 'right' },
  { header: 'DELEGATED', value: (row) => row.energy_delegated, align: 'right' },
  { header: 'RENTED', value: (row) => row.energy_rented, align: 'right' },
  { header: 'BURNED', value: (row) => row.energy_burned, align: 'right' },
  { header: 'MIXED', value: (row) => row.energy_mixed, align: 'right' },
  { header: 'BANDWIDTH', value: (row) => row.bandwidth_used, align: 'right' },
  { header: 'TRX_BURNED', value: (row) => row.trx_burned, align: 'right' },
  { header: 'TRX_RENTED', value: (row) => row.trx_rented, align: 'right' },
  { header: 'COST_USDT', value: (row) => row.cost_usdt, align: 'right' },
];

export const cryptoCostsCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { days: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const days = values.days === undefined ? 7 : Number(values.days);
    if (!Number.isInteger(days) || days < 1 || days > COST_DAYS_MAX)
      throw new CliUsageError(`--days must be a whole number from 1 to ${COST_DAYS_MAX}`);
    const views = await withCliContext(config, async (context) =>
      (await costsOfLastDays(context.db, context.clock, days)).map(dailyCostView),
    );
    if (values.json) io.out(JSON.stringify(views));
    else printTable(io.out, views, COST_COLUMNS, `no outgoing transfer became final in the last ${days} day(s)`);
    return 0;
  },
};
