// The webhook API's domain logic: event log reads, resend, secret rotation,
// the shop's endpoint, and the inline test send. Routes call these; nothing
// here sees HTTP.
import { randomUUID } from 'node:crypto';
import { recordAudit, type AuditActor } from '../audit/audit-service.ts';
import type { AppContext } from '../context.ts';
import type { ListPosition } from '../db/list-cursor.ts';
import { readListPage, type ListOrder, type ListPage } from '../db/list-page.ts';
import { inTransaction } from '../db/transaction.ts';
import { InvalidRequestError, InvalidStateError, NotFoundError } from '../errors.ts';
import { attemptDelivery, type AttemptDeps } from './delivery-attempt.ts';
import { emit } from './outbox.ts';
import { generateSigningSecret } from './signing.ts';
import { assertWebhookUrl } from './url-guard.ts';
import * as repository from './webhook-repository.ts';
import { openWebhookSecret, sealWebhookSecret } from './webhook-secrets.ts';
import type { SendResult, WebhookSender } from './webhook-sender.ts';
import type { AttemptOutcome } from './webhook-tables.ts';
import type { AttemptRow, EventRow, EventStatus, PageKey } from './webhook-repository.ts';

export type { EventStatus };

const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;
const TEST_EVENT_TYPE = 'webhook.test';
/** The inline test send holds its delivery this long, beyond its own time limit. */
const TEST_SEND_LEASE_MS = 60_000;

type Deps = Pick<AppContext, 'db' | 'clock' | 'config'>;

/** Who changes a shop's webhooks (a cabinet user, an API key), for the audit row written in the change's transaction. */
export interface WebhookChanger {
  readonly actor: AuditActor;
  readonly merchantId: string;
}

/** "Resend all failed since": at most this many events per run. */
const RESEND_FAILED_LIMIT = 1000;

/** The webhook lists' ids are [A-Za-z0-9_] (a NUL, say, never came from these lists). */
const WEBHOOK_LIST_ID = /^[A-Za-z0-9_]+$/;
const WEBHOOK_CURSOR_INVALID = 'cursor is not a cursor returned by this list';

const EVENT_LIST_ORDER: ListOrder<EventRow> = {
  isListId: (id) => WEBHOOK_LIST_ID.test(id),
  positionOf: (row) => ({ createdAt: row.created_at, id: row.id }),
  invalidCursorMessage: WEBHOOK_CURSOR_INVALID,
};

const ATTEMPT_LIST_ORDER: ListOrder<AttemptRow> = {
  isListId: (id) => WEBHOOK_LIST_ID.test(id),
  positionOf: (row) => ({ createdAt: row.started_at, id: row.id }),
  invalidCursorMessage: WEBHOOK_CURSOR_INVALID,
};

/** The repository's form of a page window's position. */
function pageKeyOf(after: ListPosition | undefined): PageKey | undefined {
  return after && { at: after.createdAt, id: after.id };
}

export interface WebhookEventView {
  id: string;
  type: string;
  created_at: string;
  data: unknown;
  destination_url: string | null;
  status: EventStatus;
  attempt_count: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
}

function eventView(row: EventRow): WebhookEventView {
  const payload = JSON.parse(row.payload) as { data?: unknown };
  return {
    id: row.id,
    type: row.type,
    created_at: row.created_at.toISOString(),
    data: payload.data ?? null,
    destination_url: row.destination_url,
    status: row.status ?? 'no_destination',
    attempt_count: row.attempt_count === null ? 0 : Number(row.attempt_count),
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
  };
}

export interface WebhookAttemptView {
  id: string;
  event_id: string;
  attempt_number: number;
  url: string;
  attempted_at: string;
  duration_ms: number;
  outcome: AttemptOutcome;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  next_retry_at: string | null;
}

function attemptView(row: AttemptRow): WebhookAttemptView {
  return {
    id: row.id,
    event_id: row.event_id,
    attempt_number: Number(row.attempt_number),
    url: row.url,
    attempted_at: row.started_at.toISOString(),
    duration_ms: Number(row.duration_ms),
    outcome: row.outcome,
    status_code: row.status_code === null ? null : Number(row.status_code),
    error: row.error,
    response_body: row.response_body,
    next_retry_at: row.next_retry_at?.toISOString() ?? null,
  };
}

const EVENT_ID = /^evt_[0-9a-z]{26}$/;
/** Event types are dotted names (payment.paid); no object id has a dot. */
const EVENT_TYPE = /^[a-z_]+(?:\.[a-z_]+)+$/;

/**
 * What a search names, by its form, so that each is one indexed condition: an
 * event id, an event type, or else the id of an object events are about.
 */
function searchFilter(query: EventListQuery): { type?: string; eventId?: string; subjectId?: string } {
  const search = query.search;
  if (search === undefined) return { type: query.type };
  if (EVENT_ID.test(search)) return { type: query.type, eventId: search };
  // The cabinet's search stands in for the API's type filter, which it never sets with it.
  if (EVENT_TYPE.test(search)) return { type: search };
  return { type: query.type, subjectId: search };
}

export interface EventListQuery {
  readonly type?: string | undefined;
  readonly status?: EventStatus | undefined;
  /** The cabinet's window and search (an event id, a type, or the id of an object an event is about). */
  readonly createdFrom?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly search?: string | undefined;
  readonly limit: number;
  readonly cursor?: string | undefined;
}

export async function listEvents(
  deps: Deps,
  shopId: string,
  query: EventListQuery,
): Promise<ListPage<WebhookEventView>> {
  return readListPage(
    query,
    EVENT_LIST_ORDER,
    (window) =>
      repository.listEvents(deps.db, shopId, {
        status: query.status,
        createdFrom: query.createdFrom,
        createdBefore: query.createdBefore,
        ...searchFilter(query),
        after: pageKeyOf(window.after),
        limit: window.limit,
      }),
    (rows) => rows.map(eventView),
  );
}

/** The most events an object's page shows. */
const EVENTS_ABOUT_MAX = 100;

/**
 * The shop's webhook events about one object (a payment, an invoice, a deposit,
 * a payout …), oldest first, each with its delivery's state: an object's timeline.
 */
export async function eventsAbout(deps: Deps, shopId: string, subjectId: string): Promise<WebhookEventView[]> {
  const rows = await repository.eventsAbout(deps.db, shopId, subjectId, EVENTS_ABOUT_MAX);
  return rows.map(eventView);
}

/** The ids of the objects an event of the shop is about (a payment, an invoice and its wallet …), as its data names them. */
export async function eventSubjects(deps: Deps, shopId: string, eventId: string): Promise<string[]> {
  return repository.eventSubjectIds(deps.db, shopId, eventId);
}

async function requireEvent(deps: Deps, shopId: string, eventId: string): Promise<EventRow> {
  const row = await repository.findEvent(deps.db, shopId, eventId);
  if (!row) throw new NotFoundError(`No webhook event ${eventId}.`);
  return row;
}

export async function getEvent(deps: Deps, shopId: string, eventId: string): Promise<WebhookEventView> {
  return eventView(await requireEvent(deps, shopId, eventId));
}

export async function listAttempts(
  deps: Deps,
  shopId: string,
  eventId: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<ListPage<WebhookAttemptView>> {
  await requireEvent(deps, shopId, eventId);
  return readListPage(
    query,
    ATTEMPT_LIST_ORDER,
    (window) => repository.listAttempts(deps.db, eventId, { after: pageKeyOf(window.after), limit: window.limit }),
    (rows) => rows.map(attemptView),
  );
}

/** Queues a new attempt now, with the same event id (and so the same webhook-id). */
export async function resendEvent(
  deps: Deps,
  shopId: string,
  eventId: string,
  by: WebhookChanger,
): Promise<WebhookEventView> {
  return inTransaction(deps.db, async (tx) => {
    const row = await repository.findEvent(tx, shopId, eventId);
    if (!row) throw new NotFoundError(`No webhook event ${eventId}.`);
    if (row.delivery_id === null)
      throw new InvalidStateError('This event had no destination URL, so there is nothing to resend.');
    await repository.requeueDelivery(tx, row.delivery_id, deps.clock.now());
    await recordAudit(tx, deps.clock, {
      ...by,
      action: 'webhook.resent',
      shopId,
      target: eventId,
      details: { type: row.type, previous_status: row.status },
    });
    const updated = await repository.findEvent(tx, shopId, eventId);
    return eventView(updated!);
  });
}

export interface RotatedSecret {
  webhook_secret: string;
  previous_secret_expires_at: string;
}

/** A new signing secret; the replaced one keeps being sent beside it for 24 h. */
export async function rotateSecret(
  deps: Deps & Pick<AppContext, 'keyring'>,
  shopId: string,
  by: WebhookChanger,
): Promise<RotatedSecret> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + SECRET_OVERLAP_MS);
  const secret = generateSigningSecret();
  await inTransaction(deps.db, async (tx) => {
    const shop = await repository.findShopWebhookSettings(tx, shopId);
    if (!shop) throw new NotFoundError('No such shop.');
    await repository.updateShopWebhookSettings(tx, shopId, {
      webhook_secret: sealWebhookSecret(deps.keyring, shopId, secret),
      previous_webhook_secret: shop.webhook_secret,
      previous_webhook_secret_expires_at: expiresAt,
    });
    await recordAudit(tx, deps.clock, {
      ...by,
      action: 'webhook.secret_rotated',
      shopId,
      details: { previous_secret_expires_at: expiresAt.toISOString() },
    });
  });
  return { webhook_secret: secret, previous_secret_expires_at: expiresAt.toISOString() };
}

export async function setEndpoint(
  deps: Deps,
  shopId: string,
  url: string | null,
  by: WebhookChanger,
): Promise<{ url: string | null }> {
  if (url !== null) assertWebhookUrl(url, deps.config);
  await inTransaction(deps.db, async (tx) => {
    const before = await repository.findShopWebhookSettings(tx, shopId);
    if (!before) throw new NotFoundError('No such shop.');
    await repository.updateShopWebhookSettings(tx, shopId, { webhook_url: url });
    await recordAudit(tx, deps.clock, {
      ...by,
      action: 'webhook.endpoint_changed',
      shopId,
      details: { before: before.webhook_url, after: url },
    });
  });
  return { url };
}

/** The current signing secret, opened; the reveal is audited. */
export async function revealSecret(
  deps: Deps & Pick<AppContext, 'keyring'>,
  shopId: string,
  by: WebhookChanger,
): Promise<string> {
  return inTransaction(deps.db, async (tx) => {
    const shop = await repository.findShopWebhookSettings(tx, shopId);
    if (!shop) throw new NotFoundError('No such shop.');
    await recordAudit(tx, deps.clock, { ...by, action: 'webhook.secret_revealed', shopId });
    return openWebhookSecret(deps.keyring, shopId, shop.webhook_secret);
  });
}

/** The endpoint and, while the replaced secret still signs beside the current one, when it stops. */
export async function getEndpointSettings(
  deps: Deps,
  shopId: string,
): Promise<{ url: string | null; previousSecretExpiresAt: Date | null }> {
  const shop = await repository.findShopWebhookSettings(deps.db, shopId);
  if (!shop) throw new NotFoundError('No such shop.');
  const expires = shop.previous_webhook_secret_expires_at;
  return {
    url: shop.webhook_url,
    previousSecretExpiresAt:
      shop.previous_webhook_secret !== null && expires !== null && expires > deps.clock.now() ? expires : null,
  };
}

/**
 * Requeues the shop's failed events created at or after `since`, oldest first,
 * at most RESEND_FAILED_LIMIT of them; `more` says failed ones remain (a second
 * run takes them: the requeued ones are no longer failed).
 */
export async function resendFailedSince(
  deps: Deps,
  shopId: string,
  since: Date,
  by: WebhookChanger,
): Promise<{ requeued: number; more: boolean }> {
  return inTransaction(deps.db, async (tx) => {
    const result = await repository.requeueFailedSince(tx, shopId, {
      since,
      limit: RESEND_FAILED_LIMIT,
      now: deps.clock.now(),
    });
    await recordAudit(tx, deps.clock, {
      ...by,
      action: 'webhook.resent_failed',
      shopId,
      details: { since: since.toISOString(), count: result.requeued, more: result.more },
    });
    return result;
  });
}

export async function getEndpoint(deps: Deps, shopId: string): Promise<{ url: string | null }> {
  const shop = await repository.findShopWebhookSettings(deps.db, shopId);
  if (!shop) throw new NotFoundError('No such shop.');
  return { url: shop.webhook_url };
}

/** What a failed test send may tell: any URL can be tried, so never the answer's body or an address the host resolved to. */
const TEST_SEND_FAILURES: Record<Exclude<AttemptOutcome, 'succeeded' | 'http_error'>, string> = {
  timeout: 'no complete answer within the time limit',
  connection_error: 'could not connect to the receiver',
  refused: 'the host resolves to an address webhooks may not reach (private, loopback, link-local or reserved)',
};

function redactTestSend(result: SendResult): SendResult {
  if (result.outcome === 'succeeded') return result;
  const error = result.outcome === 'http_error' ? result.error : TEST_SEND_FAILURES[result.outcome];
  return { ...result, error, responseBody: null };
}

/** The sender of test sends: the attempt is recorded, and answered, already redacted. */
function testSendSender(sender: WebhookSender): WebhookSender {
  return { ...sender, send: async (input) => redactTestSend(await sender.send(input)) };
}

/**
 * Sends a signed `webhook.test` event now, to `url` or the shop's endpoint, and
 * answers with the attempt. The delivery is claimed at creation (no worker takes
 * it) and is not retried. A failed attempt is stored and answered without the
 * receiver's body and with a generic error.
 */
export async function sendTestEvent(
  deps: AttemptDeps & Deps,
  shopId: string,
  url: string | undefined,
  by: WebhookChanger,
): Promise<{ event: WebhookEventView; attempt: WebhookAttemptView }> {
  if (url !== undefined) assertWebhookUrl(url, deps.config);
  const token = randomUUID();
  const emitted = await inTransaction(deps.db, async (tx) => {
    const shop = await repository.findShopWebhookSettings(tx, shopId);
    if (!shop) throw new NotFoundError('No such shop.');
    const destination = url ?? shop.webhook_url;
    if (destination === null)
      throw new InvalidRequestError(
        'url is required: this shop has no webhook endpoint set (PUT /v1/webhooks/endpoint).',
      );
    const now = deps.clock.now();
    await recordAudit(tx, deps.clock, { ...by, action: 'webhook.test_sent', shopId, details: { url: destination } });
    return emit(
      tx,
      deps.clock,
      {
        shopId,
        type: TEST_EVENT_TYPE,
        data: {
          shop_id: shopId,
          message: 'A test event from Paygate: your endpoint receives and can verify webhooks.',
        },
        destination,
      },
      { maxAttempts: 1, lease: { token, until: new Date(now.getTime() + TEST_SEND_LEASE_MS) } },
    );
  });
  const delivery = await repository.findClaimedDelivery(deps.db, emitted.deliveryId!, token);
  if (!delivery) throw new Error(`test delivery ${emitted.deliveryId} vanished`);
  await attemptDelivery({ ...deps, sender: testSendSender(deps.sender) }, delivery);
  const [attempt] = await repository.listAttempts(deps.db, emitted.id, { limit: 1 });
  return { event: await getEvent(deps, shopId, emitted.id), attempt: attemptView(attempt!) };
}
