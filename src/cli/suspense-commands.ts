// `paygate payments suspense list|refund`: captures held in suspense (docs/payments.md,
// "Suspense"), and their refund to the payer through the connector, until the cabinet exists.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { printTable, type Column } from './table.ts';
import {
  listSuspenseCaptures,
  refundSuspenseCapture,
  SUSPENSE_LIST_LIMIT_MAX,
  type CaptureView,
} from '../payments/suspense-service.ts';

function line(capture: CaptureView): string {
  return `${capture.attempt_id}  payment ${capture.payment_id}  ${capture.amount.toFixed(2)} RUB  ${capture.method}  ${capture.reason}  refund: ${capture.refund_status}`;
}

const CAPTURE_COLUMNS: readonly Column<CaptureView>[] = [
  { header: 'ATTEMPT', value: (capture) => capture.attempt_id },
  { header: 'PAYMENT', value: (capture) => capture.payment_id },
  { header: 'RUB', value: (capture) => capture.amount.toFixed(2), align: 'right' },
  { header: 'METHOD', value: (capture) => capture.method },
  { header: 'REASON', value: (capture) => capture.reason },
  { header: 'REFUND', value: (capture) => capture.refund_status },
];

export const suspenseListCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { limit: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > SUSPENSE_LIST_LIMIT_MAX)
      throw new CliUsageError(`--limit must be 1..${SUSPENSE_LIST_LIMIT_MAX}`);
    const captures = await withCliContext(config, (context) => listSuspenseCaptures(context, limit));
    if (values.json) io.out(JSON.stringify(captures));
    else printTable(io.out, captures, CAPTURE_COLUMNS, 'no captures in suspense');
    return 0;
  },
};

export const suspenseRefundCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({
      args,
      options: { attempt: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    if (!values.attempt?.trim()) throw new CliUsageError('--attempt is required');
    const attemptId = values.attempt.trim();
    const refunded = await withCliContext(config, (context) => refundSuspenseCapture(context, attemptId));
    io.out(values.json ? JSON.stringify(refunded) : line(refunded));
    return 0;
  },
};
