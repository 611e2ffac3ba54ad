// `paygate events list|resend`: the shop's webhook event log and a resend, over the
// public API of a (remote) gateway with the shop's key (docs/cli.md).
import { parseArgs } from 'node:util';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';
import { clientFromOptions, GatewayApiError, REMOTE_OPTIONS } from './remote/gateway-client.ts';
import { listEvents, type WebhookEvent } from './remote/webhook-events.ts';
import { printTable, type Column } from './table.ts';

const EVENTS_LIST_LIMIT_MAX = 1_000;
const EVENTS_LIST_LIMIT_DEFAULT = 20;

const EVENT_COLUMNS: readonly Column<WebhookEvent>[] = [
  { header: 'EVENT', value: (event) => event.id },
  { header: 'TYPE', value: (event) => event.type },
  { header: 'STATUS', value: (event) => event.status },
  { header: 'ATTEMPTS', value: (event) => String(event.attempt_count), align: 'right' },
  { header: 'CREATED', value: (event) => event.created_at },
];

/** The API's refusals in one line, exit 1. */
async function answered(io: CliIo, work: () => Promise<void>): Promise<number> {
  try {
    await work();
    return 0;
  } catch (error) {
    if (!(error instanceof GatewayApiError)) throw error;
    io.err(`paygate: ${error.message}`);
    return 1;
  }
}

export const eventsListCommand: CliCommand = {
  async run(args, io) {
    const { values } = parseArgs({
      args,
      options: {
        ...REMOTE_OPTIONS,
        type: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const limit = values.limit === undefined ? EVENTS_LIST_LIMIT_DEFAULT : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > EVENTS_LIST_LIMIT_MAX)
      throw new CliUsageError(`--limit must be 1..${EVENTS_LIST_LIMIT_MAX}`);
    const type = values.type?.trim();
    if (type === '') throw new CliUsageError('--type must name an event type');
    const client = clientFromOptions(values, io.env);
    return answered(io, async () => {
      const events = await listEvents(client, { type, limit });
      if (values.json) io.out(JSON.stringify(events));
      else printTable(io.out, events, EVENT_COLUMNS, 'no events');
    });
  },
};

export const eventsResendCommand: CliCommand = {
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { ...REMOTE_OPTIONS, json: { type: 'boolean', default: false } },
    });
    const eventId = positionals[0]?.trim();
    if (!eventId || positionals.length > 1) throw new CliUsageError('name one event: paygate events resend EVT_ID');
    const client = clientFromOptions(values, io.env);
    return answered(io, async () => {
      const event = await client.post<WebhookEvent>(`/v1/webhooks/events/${encodeURIComponent(eventId)}/resend`);
      io.out(
        values.json
          ? JSON.stringify(event)
          : `${event.id}  ${event.type}  resent to ${event.destination_url ?? '(none)'}: ${event.status}, next attempt ${event.next_attempt_at ?? 'none'}`,
      );
    });
  },
};
