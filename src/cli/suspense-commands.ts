// `paygate payments suspense list|refund`: captures held in suspense (docs/payments.md,
// "Suspense"), and their refund to the payer through the connector, until the cabinet exists.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand } from './cli-command.ts';
import { withCliContext } from './database-command.ts';
import { listSuspenseCaptures, refundSuspenseCapture, SUSPENSE_LIST_LIMIT_MAX, type CaptureView } from '../payments/suspense-service.ts';

function line(capture: CaptureView): string {
  return `${capture.attempt_id}  payment ${capture.payment_id}  ${capture.amount.toFixed(2)} RUB  ${capture.method}  ${capture.reason}  refund: ${capture.refund_status}`;
}

export const suspenseListCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { limit: { type: 'string' }, json: { type: 'boolean', default: false } } });
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > SUSPENSE_LIST_LIMIT_MAX) throw new CliUsageError(`--limit must be 1..${SUSPENSE_LIST_LIMIT_MAX}`);
    const captures = await withCliContext(config, (context) => listSuspenseCaptures(context, limit));
    if (values.json) io.out(JSON.stringify(captures));
    else for (const capture of captures) io.out(line(capture));
    return 0;
  },
};

export const suspenseRefundCommand: CliCommand = {
  async run(args, io, config) {
    const { values } = parseArgs({ args, options: { attempt: { type: 'string' }, json: { type: 'boolean', default: false } } });
    if (!values.attempt?.trim()) throw new CliUsageError('--attempt is required');
    const attemptId = values.attempt.trim();
    const refunded = await withCliContext(config, (context) => refundSuspenseCapture(context, attemptId));
    io.out(values.json ? JSON.stringify(refunded) : line(refunded));
    return 0;
  },
};
