// `paygate listen`: a developer's receiver gets a (remote) gateway's webhooks
// without being reachable from it. It holds one outgoing stream
// (GET /v1/webhooks/stream, Server-Sent Events) with a shop's key and forwards
// each event to a local URL, signed with Standard Webhooks headers exactly as a
// real delivery is, but with a listen secret derived from the key (so the
// developer configures it once, and it never signs the shop's real webhooks).
// It reconnects with backoff and resumes after the last event it saw, and it
// keeps that resume point in a state file per gateway and shop
// (listen-resume-point.ts), so a listen started again resumes there too.
import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Agent, request, type Dispatcher } from 'undici';
import { retryAfterMs } from '../retry-after.ts';
import { signedHeaders } from '../webhooks/signing.ts';
import { CliUsageError, type CliCommand, type CliIo } from './cli-command.ts';
import { ListenResumePoint } from './listen-resume-point.ts';

const DEFAULT_GATEWAY_URL = 'http://localhost:8080';
/** Nothing at all (not even a heartbeat) for this long: the stream is dead, reconnect. */
const IDLE_LIMIT_MS = 45_000;
const FORWARD_TIMEOUT_MS = 10_000;
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30_000;
/** The longest a gateway's Retry-After holds listen back: a wrong header must not park it for hours. */
const RETRY_AFTER_MAX_MS = 300_000;

interface ListenOptions {
  readonly gatewayUrl: string;
  readonly apiKey: string;
  readonly forwardTo: URL;
  readonly types: string | undefined;
  readonly printJson: boolean;
  readonly skipVerify: boolean;
  /** Ignore the saved resume point: start from now. */
  readonly fromNow: boolean;
}

/**
 * The listen secret of an API key: stable, so the receiver is configured once; derived one way,
 * so it tells nothing of the key; and unlike the shop's own secret it signs nothing the gateway sends.
 */
export function listenSecretFor(apiKey: string): string {
  const key = createHmac('sha256', apiKey).update('paygate listen signing secret v1').digest().subarray(0, 24);
  return `whsec_${key.toString('base64')}`;
}

function readOptions(args: string[], env: CliIo['env']): ListenOptions {
  const { values } = parseArgs({
    args,
    options: {
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      'api-key': { type: 'string' },
      url: { type: 'string' },
      'print-json': { type: 'boolean' },
      'skip-verify': { type: 'boolean' },
      'from-now': { type: 'boolean' },
    },
  });
  const apiKey = values['api-key'] ?? env.PAYGATE_API_KEY;
  if (!apiKey) throw new CliUsageError('give a key of the shop with the webhooks scope: --api-key or PAYGATE_API_KEY');
  if (!values['forward-to']) throw new CliUsageError('--forward-to URL is required (e.g. http://localhost:3000/hooks)');
  return {
    gatewayUrl: httpUrl(values.url ?? env.PAYGATE_URL ?? DEFAULT_GATEWAY_URL, '--url').href.replace(/\/+$/, ''),
    apiKey,
    forwardTo: httpUrl(values['forward-to'], '--forward-to'),
    types: values.events,
    printJson: values['print-json'] === true,
    skipVerify: values['skip-verify'] === true,
    fromNow: values['from-now'] === true,
  };
}

function httpUrl(text: string, flag: string): URL {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new CliUsageError(`${flag} must be an http or https URL`);
  return url;
}

/** Why a connection ended: `fatal` stops the command (a key that cannot stream). */
interface ConnectionEnd {
  readonly fatal?: string;
  /** The gateway's Retry-After, in ms. */
  readonly retryAfterMs?: number;
  /** The resume point was refused: start from now. */
  readonly dropResume?: boolean;
  /** Events arrived: the backoff starts over. */
  readonly received: boolean;
}

class Listener {
  lastEventId: string | undefined;
  /** Known once the gateway said whose the key is (GET /v1/account). */
  #resumePoint: ListenResumePoint | undefined;
  #saveFailed = false;
  readonly #options: ListenOptions;
  readonly #io: CliIo;
  readonly #secret: string;
  readonly #forwarder: Dispatcher;
  readonly #gateway = new Agent();

  constructor(options: ListenOptions, io: CliIo) {
    this.#options = options;
    this.#io = io;
    this.#secret = listenSecretFor(options.apiKey);
    // Self-signed TLS of a local receiver: only the forwarding skips verification, never the gateway's.
    this.#forwarder = new Agent(options.skipVerify ? { connect: { rejectUnauthorized: false } } : {});
  }

  get secret(): string {
    return this.#secret;
  }

  async close(): Promise<void> {
    await Promise.all([this.#forwarder.close(), this.#gateway.close()]);
  }

  /** One connection, until it ends or `signal` aborts. */
  async connect(signal: AbortSignal): Promise<ConnectionEnd> {
    const idle = new AbortController();
    let idleTimer = setTimeout(() => idle.abort(), IDLE_LIMIT_MS);
    const touch = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => idle.abort(), IDLE_LIMIT_MS);
    };
    try {
      if (this.#resumePoint === undefined) await this.#findResumePoint(signal);
      const response = await request(this.#streamUrl(), {
        dispatcher: this.#gateway,
        headers: {
          authorization: `Bearer ${this.#options.apiKey}`,
          accept: 'text/event-stream',
          ...(this.lastEventId === undefined ? {} : { 'last-event-id': this.lastEventId }),
        },
        signal: AbortSignal.any([signal, idle.signal]),
      });
      if (response.statusCode !== 200) return await this.#refused(response);
      this.#io.err(
        `paygate listen: connected${this.lastEventId === undefined ? '' : `, resuming after ${this.lastEventId}`}`,
      );
      return { received: await this.#consume(response.body, touch) };
    } finally {
      clearTimeout(idleTimer);
    }
  }

  /**
   * Learns the key's shop, then (unless --from-now, or a resume point is already held) takes the
   * saved resume point. A gateway that does not answer it now is asked again at the next connection;
   * a key it refuses is then refused by the stream too, which says why.
   */
  async #findResumePoint(signal: AbortSignal): Promise<void> {
    const response = await request(`${this.#options.gatewayUrl}/v1/account`, {
      dispatcher: this.#gateway,
      headers: { authorization: `Bearer ${this.#options.apiKey}`, accept: 'application/json' },
      signal: AbortSignal.any([signal, AbortSignal.timeout(IDLE_LIMIT_MS)]),
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      return;
    }
    const { shop_id: shopId } = (await response.body.json()) as { shop_id?: unknown };
    if (typeof shopId !== 'string') return;
    this.#resumePoint = new ListenResumePoint(this.#io.env, this.#options.gatewayUrl, shopId);
    if (this.#options.fromNow || this.lastEventId !== undefined) return;
    try {
      this.lastEventId = await this.#resumePoint.read();
    } catch (error) {
      this.#io.err(`paygate listen: cannot read ${this.#resumePoint.path} (${errorText(error)}); starting from now`);
    }
    if (this.lastEventId !== undefined)
      this.#io.err(`paygate listen: the last listen of this shop stopped after ${this.lastEventId}`);
  }

  #streamUrl(): string {
    const query = this.#options.types === undefined ? '' : `?types=${encodeURIComponent(this.#options.types)}`;
    return `${this.#options.gatewayUrl}/v1/webhooks/stream${query}`;
  }

  async #refused(response: Dispatcher.ResponseData): Promise<ConnectionEnd> {
    const text = await response.body.text();
    const { error, message } = parseError(text);
    const status = response.statusCode;
    this.#io.err(`paygate listen: the gateway answered ${status} ${error}: ${message}`);
    if (status === 401 || status === 403 || status === 404) return { fatal: message, received: false };
    if (status === 400 && this.lastEventId !== undefined) return { dropResume: true, received: false };
    if (status === 400) return { fatal: message, received: false };
    const waitMs = retryAfterMs(response.headers['retry-after'], new Date());
    return { received: false, ...(waitMs === undefined ? {} : { retryAfterMs: Math.min(waitMs, RETRY_AFTER_MAX_MS) }) };
  }

  /** Reads frames and forwards each event in order; true when at least one event came. */
  async #consume(body: AsyncIterable<Buffer>, touch: () => void): Promise<boolean> {
    const pending: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => pending.push(event), onComment: touch });
    const decoder = new TextDecoder();
    let received = false;
    for await (const chunk of body) {
      touch();
      parser.feed(decoder.decode(chunk, { stream: true }));
      for (const event of pending.splice(0)) {
        await this.#forward(event);
        received = true;
      }
    }
    return received;
  }

  async #forward(event: EventSourceMessage): Promise<void> {
    const id = event.id ?? '';
    const type = event.event ?? 'message';
    const startedAt = performance.now();
    const outcome = await this.#post(id, event.data);
    const durationMs = Math.round(performance.now() - startedAt);
    this.lastEventId = id;
    await this.#save(id);
    if (this.#options.printJson) this.#io.out(event.data);
    else this.#io.out(`${new Date().toISOString()}  ${type}  ${id}  --> ${outcome} (${durationMs} ms)`);
  }

  /** Keeps the resume point; a state file that cannot be written is said once and forwarding goes on. */
  async #save(id: string): Promise<void> {
    if (!this.#resumePoint || id === '') return;
    try {
      await this.#resumePoint.write(id, new Date());
    } catch (error) {
      if (this.#saveFailed) return;
      this.#saveFailed = true;
      this.#io.err(
        `paygate listen: cannot keep the resume point in ${this.#resumePoint.path} (${errorText(error)}); a listen started again starts from now`,
      );
    }
  }

  /** The receiver's status, or what went wrong; a failed forward is reported, not retried. */
  async #post(id: string, body: string): Promise<string> {
    try {
      const response = await request(this.#options.forwardTo, {
        method: 'POST',
        dispatcher: this.#forwarder,
        headers: signedHeaders({ current: this.#secret }, id, new Date(), body),
        body,
        signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      });
      await response.body.dump();
      return String(response.statusCode);
    } catch (error) {
      return `error: ${errorText(error)}`;
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function parseError(text: string): { error: string; message: string } {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    return { error: String(parsed.error ?? 'error'), message: String(parsed.message ?? text) };
  } catch {
    return { error: 'error', message: text.slice(0, 200) };
  }
}

function backoffMs(failures: number): number {
  return Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.min(failures, 16)) * (0.8 + Math.random() * 0.4);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** Connects until stopped: reconnects with backoff, resuming after the last event forwarded. */
async function listenUntilStopped(listener: Listener, io: CliIo, signal: AbortSignal): Promise<number> {
  let failures = 0;
  while (!signal.aborted) {
    let end: ConnectionEnd;
    try {
      end = await listener.connect(signal);
    } catch (error) {
      if (signal.aborted) break;
      io.err(`paygate listen: the stream broke (${errorText(error)})`);
      end = { received: false };
    }
    if (end.fatal !== undefined) return 1;
    if (end.dropResume) {
      io.err(
        `paygate listen: warning: the stream no longer has ${listener.lastEventId} (older than it keeps, or not this shop's): starting from now; events made in between are not forwarded (GET /v1/webhooks/events lists them)`,
      );
      listener.lastEventId = undefined;
    }
    failures = end.received ? 0 : failures + 1;
    if (signal.aborted) break;
    const waitMs = Math.max(end.retryAfterMs ?? 0, backoffMs(failures));
    io.err(
      `paygate listen: reconnecting in ${(waitMs / 1000).toFixed(1)} s${listener.lastEventId ? ` after ${listener.lastEventId}` : ''}`,
    );
    await pause(waitMs, signal);
  }
  return 0;
}

export const listenCommand: CliCommand = {
  async run(args, io) {
    const options = readOptions(args, io.env);
    const listener = new Listener(options, io);
    // Status goes to stderr, so that stdout holds only the events (one JSON per line with --print-json).
    io.err(`Forwarding ${options.types ?? 'all'} events of ${options.gatewayUrl} to ${options.forwardTo.href}`);
    io.err(`Listen signing secret (stable for this API key): ${listener.secret}`);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      return await listenUntilStopped(listener, io, stop.signal);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await listener.close();
    }
  },
};
