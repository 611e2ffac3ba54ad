// `paygate shop methods list|set`: a shop's payment methods and tariff, until the cabinet exists.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable, type Column } from './table.ts';
import { formatMinor, parseMinor } from '../money/decimal.ts';
import { shopMethodSettings, updateShopMethod, type MethodSettings } from '../payments/payment-methods.ts';

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

function rubles(value: string | undefined, flag: string): bigint | undefined {
  if (value === undefined) return undefined;
  const parsed = parseMinor(value, 'RUB', 'decimal-string');
  if (!parsed.ok || parsed.minor < 0n)
    throw new CliUsageError(`${flag} must be an amount in RUB with at most 2 decimals, e.g. 1500.50`);
  return parsed.minor;
}

/** "2.5" (percent) → 250 basis points. */
function feeBasisPoints(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(value);
  if (!match) throw new CliUsageError('--fee-percent must be a percentage with at most 2 decimals, e.g. 2.5');
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}

function describe(settings: MethodSettings): Record<string, unknown> {
  return {
    method: settings.method,
    enabled: settings.enabled,
    min_amount: formatMinor(settings.minKopecks, 'RUB'),
    max_amount: formatMinor(settings.maxKopecks, 'RUB'),
    fee_percent: (settings.feeBasisPoints / 100).toFixed(2),
  };
}

function line(settings: MethodSettings): string {
  const view = describe(settings);
  return `${String(view.method).padEnd(8)} ${settings.enabled ? 'on ' : 'off'}  ${view.min_amount}..${view.max_amount} RUB  payer fee ${view.fee_percent} %`;
}

const METHOD_COLUMNS: readonly Column<MethodSettings>[] = [
  { header: 'METHOD', value: (settings) => settings.method },
  { header: 'ENABLED', value: (settings) => (settings.enabled ? 'on' : 'off') },
  { header: 'MIN RUB', value: (settings) => formatMinor(settings.minKopecks, 'RUB'), align: 'right' },
  { header: 'MAX RUB', value: (settings) => formatMinor(settings.maxKopecks, 'RUB'), align: 'right' },
  { header: 'PAYER FEE %', value: (settings) => (settings.feeBasisPoints / 100).toFixed(2), align: 'right' },
];

export const shopMethodsListCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { shop: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const shopId = required(values.shop, '--shop');
    const settings = await withCliContext(config, (context) => shopMethodSettings(context.db, shopId));
    if (values.json) io.out(JSON.stringify(settings.map(describe)));
    else printTable(io.out, settings, METHOD_COLUMNS, 'no payment methods');
    return 0;
  },
};

export const shopMethodsSetCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: {
        shop: { type: 'string' },
        method: { type: 'string' },
        enable: { type: 'boolean' },
        disable: { type: 'boolean' },
        min: { type: 'string' },
        max: { type: 'string' },
        'fee-percent': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const shopId = required(values.shop, '--shop');
    const method = required(values.method, '--method');
    if (values.enable && values.disable) throw new CliUsageError('give --enable or --disable, not both');
    const updated = await withCliContext(config, (context) =>
      updateShopMethod(context, shopId, method, {
        enabled: values.enable ? true : values.disable ? false : undefined,
        minKopecks: rubles(values.min, '--min'),
        maxKopecks: rubles(values.max, '--max'),
        feeBasisPoints: feeBasisPoints(values['fee-percent']),
      }),
    );
    io.out(values.json ? JSON.stringify(describe(updated)) : line(updated));
    return 0;
  },
};
