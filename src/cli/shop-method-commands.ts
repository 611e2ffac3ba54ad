// `paygate shop methods list|set`: a shop's payment methods and tariff (the cabinet's methods page does the same; both audit `method.changed`).
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable, type Column } from './table.ts';
import { OPERATOR } from '../audit/audit-service.ts';
import { InvalidRequestError } from '../errors.ts';
import { formatMinor } from '../money/decimal.ts';
import {
  describeMethodSettings,
  parseFeePercent,
  parseRubles,
  shopMethodSettings,
  updateShopMethod,
  type MethodSettings,
} from '../payments/payment-methods.ts';

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new CliUsageError(`${flag} is required`);
  return value;
}

/** The service's parse, its refusal as bad usage (exit code 2). */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof InvalidRequestError) throw new CliUsageError(error.message);
    throw error;
  }
}

function rubles(value: string | undefined, flag: string): bigint | undefined {
  return value === undefined ? undefined : usage(() => parseRubles(value, flag));
}

function feeBasisPoints(value: string | undefined): number | undefined {
  return value === undefined ? undefined : usage(() => parseFeePercent(value, '--fee-percent'));
}

function line(settings: MethodSettings): string {
  const view = describeMethodSettings(settings);
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
    if (values.json) io.out(JSON.stringify(settings.map(describeMethodSettings)));
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
      updateShopMethod(
        context,
        shopId,
        method,
        {
          enabled: values.enable ? true : values.disable ? false : undefined,
          minKopecks: rubles(values.min, '--min'),
          maxKopecks: rubles(values.max, '--max'),
          feeBasisPoints: feeBasisPoints(values['fee-percent']),
        },
        OPERATOR,
      ),
    );
    io.out(values.json ? JSON.stringify(describeMethodSettings(updated)) : line(updated));
    return 0;
  },
};
