// `paygate withdrawal create|approve|reject|list|settings`: cabinet withdrawals
// (src/crypto/withdrawals/, docs/refunds-and-withdrawals.md) driven by an
// operator beside the cabinet's pages. No API key reaches withdrawals. An operator
// decides as an operator (audited so), compared with the requester by name and
// never taken for a cabinet user who asked.
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { CliUsageError, operatorName, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable, type Column } from './table.ts';
import { operatorNamed } from '../audit/audit-service.ts';
import { createCryptoChain } from '../crypto/chain/crypto-chain.ts';
import { parsePayoutAmount } from '../crypto/payouts/payout-service.ts';
import {
  approveWithdrawal,
  createWithdrawal,
  listWithdrawals,
  rejectWithdrawal,
  setSinglePersonLimit,
  setWithdrawalApproval,
  WITHDRAWAL_LIST_LIMIT_MAX,
} from '../crypto/withdrawals/withdrawal-service.ts';
import type { WithdrawalView } from '../crypto/withdrawals/withdrawals-views.ts';

function line(view: WithdrawalView): string {
  const decision =
    view.decision === null
      ? ''
      : `  ${view.decision.approved ? 'approved' : 'rejected'} by ${view.decision.by} at ${view.decision.at}`;
  const error = view.error === null ? '' : `  error ${view.error.code}: ${view.error.message}`;
  return (
    `${view.withdrawal_id}  ${view.status}  ${view.amount} USDT + fee ${view.network_fee} = ${view.total_debit}  to ${view.recipient_address}  ` +
    `merchant ${view.merchant_id} shop ${view.shop_id}  by ${view.requested_by}  ${view.created_at}${view.tx_hash === null ? '' : `  tx ${view.tx_hash}`}${decision}${error}`
  );
}

const WITHDRAWAL_COLUMNS: readonly Column<WithdrawalView>[] = [
  { header: 'WITHDRAWAL', value: (view) => view.withdrawal_id },
  { header: 'STATUS', value: (view) => view.status },
  { header: 'USDT', value: (view) => view.amount, align: 'right' },
  { header: 'FEE', value: (view) => view.network_fee, align: 'right' },
  { header: 'TOTAL', value: (view) => view.total_debit, align: 'right' },
  { header: 'TO', value: (view) => view.recipient_address },
  { header: 'MERCHANT', value: (view) => view.merchant_id },
  { header: 'SHOP', value: (view) => view.shop_id },
  { header: 'BY', value: (view) => view.requested_by },
  { header: 'CREATED', value: (view) => view.created_at },
  { header: 'TX', value: (view) => view.tx_hash ?? '' },
  {
    header: 'DECISION',
    value: (view) =>
      view.decision === null
        ? ''
        : `${view.decision.approved ? 'approved' : 'rejected'} by ${view.decision.by} at ${view.decision.at}`,
  },
  { header: 'ERROR', value: (view) => (view.error === null ? '' : `${view.error.code}: ${view.error.message}`) },
];

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new CliUsageError(`${flag} is required`);
  return value.trim();
}

export const withdrawalCreateCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        shop: { type: 'string' },
        'external-id': { type: 'string' },
        amount: { type: 'string' },
        address: { type: 'string' },
        by: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const input = {
      merchantId: required(values.merchant, '--merchant'),
      // The shop names the book (sandbox or live) and receives cabinet.withdrawal.completed.
      shopId: required(values.shop, '--shop'),
      // Run the command again with the same key (after a timeout, say): the same withdrawal, never a second.
      externalId: required(values['external-id'], '--external-id'),
      amount: required(values.amount, '--amount'),
      address: required(values.address, '--address'),
      requestedBy: operatorName(values.by),
    };
    const view = await withCliContext(config, async (context) => {
      // Drives the sandbox chain a running worker serves (recorded in the data folder); never serves one itself.
      const dataDir = basename(config.dataDir) === 'memory:' ? undefined : config.dataDir;
      const chain = createCryptoChain({
        config,
        dataDir,
        logger: context.logger,
        keyStore: context,
        sandboxServes: false,
      });
      try {
        return await createWithdrawal(
          { db: context.db, clock: context.clock, config, chain, logger: context.logger },
          input,
        );
      } finally {
        await chain.close();
      }
    });
    io.out(values.json ? JSON.stringify(view) : line(view));
    return 0;
  },
};

function decisionArgs(args: string[]): { id: string; by: string; reason: string | null; json: boolean } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { by: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals.length !== 1) throw new CliUsageError('give exactly one withdrawal id');
  return { id: positionals[0]!, by: operatorName(values.by), reason: values.reason ?? null, json: values.json };
}

export const withdrawalApproveCommand: CliCommand = {
  async run(args, io, config) {
    const { id, by, json } = decisionArgs(args);
    const view = await withCliContext(config, (context) => approveWithdrawal(context, id, by));
    io.out(json ? JSON.stringify(view) : line(view));
    return 0;
  },
};

export const withdrawalRejectCommand: CliCommand = {
  async run(args, io, config) {
    const { id, by, reason, json } = decisionArgs(args);
    const view = await withCliContext(config, (context) => rejectWithdrawal(context, id, by, reason));
    io.out(json ? JSON.stringify(view) : line(view));
    return 0;
  },
};

export const withdrawalListCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        merchant: { type: 'string' },
        status: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > WITHDRAWAL_LIST_LIMIT_MAX)
      throw new CliUsageError(`--limit must be 1..${WITHDRAWAL_LIST_LIMIT_MAX}`);
    const views = await withCliContext(config, (context) =>
      listWithdrawals(context.db, { limit, merchantId: values.merchant, status: values.status }),
    );
    if (values.json) io.out(JSON.stringify(views));
    else printTable(io.out, views, WITHDRAWAL_COLUMNS, 'no withdrawals');
    return 0;
  },
};

/**
 * The merchant's single-person rule for a book: `--merchant M --book sandbox|live --single-person-max AMOUNT|none`;
 * the former per-shop form `--shop S --approval required|none` still works and sets the rule of the shop's merchant
 * and book (required: no single-person limit; none: no practical limit).
 */
export const withdrawalSettingsCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        shop: { type: 'string' },
        approval: { type: 'string' },
        merchant: { type: 'string' },
        book: { type: 'string' },
        'single-person-max': { type: 'string' },
      },
    });
    if (values.shop !== undefined) {
      const shopId = required(values.shop, '--shop');
      if (values.approval !== 'required' && values.approval !== 'none')
        throw new CliUsageError('--approval must be required or none');
      const approvalRequired = values.approval === 'required';
      await withCliContext(config, (context) => setWithdrawalApproval(context, shopId, approvalRequired));
      io.out(
        `shop ${shopId}: withdrawals of its merchant's book ${approvalRequired ? 'wait for approval by a second person' : 'are sent without approval'}`,
      );
      return 0;
    }
    const merchantId = required(values.merchant, '--merchant (or --shop)');
    if (values.book !== 'sandbox' && values.book !== 'live') throw new CliUsageError('--book must be sandbox or live');
    const mode = values.book;
    const limit = required(values['single-person-max'], '--single-person-max');
    const maxMicro = limit === 'none' ? null : parsePayoutAmount(limit, '--single-person-max');
    await withCliContext(config, (context) =>
      setSinglePersonLimit(context, { merchantId, mode, maxMicro, actor: operatorNamed(operatorName(undefined)) }),
    );
    io.out(
      `merchant ${merchantId} (${mode}): ${maxMicro === null ? 'every withdrawal waits for a second person' : `one person may withdraw up to ${limit} USDT`}`,
    );
    return 0;
  },
};
