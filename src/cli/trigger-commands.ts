// `paygate trigger <event>`: makes a sandbox gateway emit a real webhook event of
// that type, with real data, over its public API only (docs/cli.md, "Trigger
// events"): the scenario of remote/trigger-scenarios.ts runs, then the command
// waits until the event is in the shop's event log and prints it.
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';
import { clientFromOptions, GatewayApiError, REMOTE_OPTIONS, type GatewayClient } from './remote/gateway-client.ts';
import { deadlineIn, waitFor, WaitTimeoutError, type Deadline } from './remote/polling.ts';
import {
  INVOICE_OUTCOMES,
  TRIGGER_KINDS,
  type ExpectedEvent,
  type InvoiceOutcome,
  type TriggerKind,
} from './remote/trigger-scenarios.ts';
import { listEvents, type WebhookEvent } from './remote/webhook-events.ts';
import { printTable } from './table.ts';

const TIMEOUT_DEFAULT_S = 300;
const TIMEOUT_MAX_S = 3_600;
/** Newest events read per look: more than any scenario writes of one type. */
const EVENTS_PER_LOOK = 100;

/** The gateway refused or cannot do what the command needs; said in one line, exit 1. */
class TriggerRefused extends Error {}

function kindNamed(name: string | undefined): TriggerKind {
  if (name === undefined) throw new CliUsageError('name the event to trigger (paygate trigger --list shows them)');
  const kind = TRIGGER_KINDS.find((candidate) => candidate.name === name);
  if (!kind)
    throw new CliUsageError(
      `no event "${name}" to trigger; one of: ${TRIGGER_KINDS.map((candidate) => candidate.name).join(', ')}`,
    );
  return kind;
}

function parseTimeoutMs(text: string | undefined): number {
  const seconds = text === undefined ? TIMEOUT_DEFAULT_S : Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > TIMEOUT_MAX_S)
    throw new CliUsageError(`--timeout must be a whole number of seconds, 1..${TIMEOUT_MAX_S}`);
  return seconds * 1000;
}

function parseInvoiceOutcome(kind: TriggerKind, text: string | undefined): InvoiceOutcome {
  if (text === undefined) return 'paid';
  if (kind.name !== 'crypto.invoice.updated') throw new CliUsageError('--status is for crypto.invoice.updated only');
  const outcome = INVOICE_OUTCOMES.find((candidate) => candidate === text);
  if (!outcome) throw new CliUsageError(`--status must be one of ${INVOICE_OUTCOMES.join(', ')}`);
  return outcome;
}

/** Test helpers exist for sandbox shops only; a live shop's key is refused before anything is made. */
async function requireSandbox(client: GatewayClient): Promise<void> {
  const account = await client.get<{ shop_id: string; mode: string }>('/v1/account');
  if (account.mode !== 'sandbox')
    throw new TriggerRefused(
      `the key is of ${account.mode} shop ${account.shop_id}: paygate trigger drives sandbox shops only (their test helpers play the payer, the acquirer and the chain); use a sandbox shop's key`,
    );
}

async function waitForEvent(client: GatewayClient, expected: ExpectedEvent, deadline: Deadline): Promise<WebhookEvent> {
  return waitFor(expected.describe, deadline, async () => {
    const events = await listEvents(client, { type: expected.type, limit: EVENTS_PER_LOOK });
    return events.find((event) => expected.matches(event.data));
  });
}

function printKinds(io: CliIo, json: boolean): void {
  const kinds = TRIGGER_KINDS.map(({ name, summary }) => ({ event: name, what: summary }));
  if (json) io.out(JSON.stringify(kinds));
  else
    printTable(
      io.out,
      kinds,
      [
        { header: 'EVENT', value: (kind) => kind.event },
        { header: 'WHAT IT MAKES', value: (kind) => kind.what },
      ],
      'no events',
    );
}

export const triggerCommand: CliCommand = {
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...REMOTE_OPTIONS,
        status: { type: 'string' },
        'callback-url': { type: 'string' },
        timeout: { type: 'string' },
        list: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    if (values.list) {
      printKinds(io, values.json);
      return 0;
    }
    if (positionals.length > 1) throw new CliUsageError('name one event');
    const kind = kindNamed(positionals[0]);
    const invoiceOutcome = parseInvoiceOutcome(kind, values.status);
    const deadline = deadlineIn(parseTimeoutMs(values.timeout));
    const client = clientFromOptions(values, io.env);
    try {
      await requireSandbox(client);
      const callbackUrl =
        values['callback-url'] ?? (await client.get<{ url: string | null }>('/v1/webhooks/endpoint')).url;
      if (kind.needsCallbackUrl && callbackUrl === null)
        throw new TriggerRefused(
          `${kind.name} is written only for a payment with a callback_url, and the shop has no webhook URL to give it: pass --callback-url URL, or set the shop's (PUT /v1/webhooks/endpoint)`,
        );
      const expected = await kind.run({
        client,
        deadline,
        callbackUrl,
        invoiceOutcome,
        note: (line) => io.err(line),
      });
      const event = await waitForEvent(client, expected, deadline);
      io.out(
        values.json
          ? JSON.stringify(event)
          : `${event.id}  ${event.type}  ${event.destination_url ?? 'no webhook URL: stored, not sent'}`,
      );
      return 0;
    } catch (error) {
      if (error instanceof GatewayApiError || error instanceof WaitTimeoutError || error instanceof TriggerRefused) {
        io.err(`paygate: ${error.message}`);
        return 1;
      }
      throw error;
    }
  },
};
