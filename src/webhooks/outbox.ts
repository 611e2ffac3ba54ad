// The outbox: modules call `emit` inside the transaction of the state change,
// so the change and its event commit together or not at all. Nothing is sent
// here; delivery workers pick the event up after commit.
import type { Clock } from '../clock.ts';
import type { CteAnchor } from '../db/statement-anchor.ts';
import type { Tx } from '../db/transaction.ts';
import { newId } from '../ids.ts';
import type { RawBuilder } from 'kysely';
import {
  insertDeliveries,
  insertDelivery,
  insertEvent,
  insertEvents,
  shopEventsInsertFrom,
  shopWebhookUrls,
  type DeliveryInsert,
  type EventInsert,
} from './webhook-repository.ts';
import { MAX_ATTEMPTS } from './retry-schedule.ts';

export interface EmitInput {
  readonly shopId: string;
  /** e.g. `payment.paid`, `crypto.payout.updated`. */
  readonly type: string;
  /** The full resource as the API shows it at this moment. */
  readonly data: unknown;
  /**
   * Where the event goes. A payment passes its `callback_url` (null when it has none);
   * `'shop'` means the shop's configured webhook URL, resolved now (crypto events).
   */
  readonly destination: string | null | 'shop';
}

export interface EmittedEvent {
  readonly id: string;
  readonly destinationUrl: string | null;
}

export interface EmitOptions {
  /** Automatic attempts allowed (the retry schedule's by default). */
  readonly maxAttempts?: number;
  /** Claim the delivery for this lease at once (the inline test send); no worker picks it up meanwhile. */
  readonly lease?: { readonly token: string; readonly until: Date };
}

/** The fields of an event's data that name an object it is about, at the top level. */
const SUBJECT_FIELDS = [
  'payment_id',
  'invoice_id',
  'refund_id',
  'payout_id',
  'batch_id',
  'withdrawal_id',
  'deposit_id',
  'wallet_id',
] as const;
/**
 * Objects an event carries whole: the wallet and deposit of crypto.wallet.deposit and crypto.balance.funded,
 * the refund of payment.refunded.
 */
const NESTED_SUBJECTS = ['wallet', 'deposit', 'refund'] as const;
const SUBJECT_ID = /^[A-Za-z0-9_-]{1,100}$/;

function idsIn(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const fields = value as Record<string, unknown>;
  return SUBJECT_FIELDS.map((field) => fields[field]).filter(
    (id): id is string => typeof id === 'string' && SUBJECT_ID.test(id),
  );
}

/** The ids of the objects an event's data is about: an object's page finds its webhooks by them. */
export function subjectIdsOf(data: unknown): string[] {
  const nested = NESTED_SUBJECTS.flatMap((key) =>
    typeof data === 'object' && data !== null ? idsIn((data as Record<string, unknown>)[key]) : [],
  );
  return [...new Set([...idsIn(data), ...nested])];
}

export async function emit(
  tx: Tx,
  clock: Clock,
  input: EmitInput,
  options: EmitOptions = {},
): Promise<EmittedEvent & { deliveryId: string | null }> {
  const id = newId('event');
  const createdAt = clock.now();
  const destinationUrl =
    input.destination === 'shop'
      ? ((
          await tx
            .selectFrom('webhook_endpoints')
            .select('webhook_url')
            .where('shop_id', '=', input.shopId)
            .executeTakeFirst()
        )?.webhook_url ?? null)
      : input.destination;
  const payload = JSON.stringify({ id, type: input.type, created_at: createdAt.toISOString(), data: input.data });
  await insertEvent(tx, {
    id,
    shop_id: input.shopId,
    type: input.type,
    payload,
    destination_url: destinationUrl,
    created_at: createdAt,
    subject_ids: subjectIdsOf(input.data),
  });
  if (destinationUrl === null) return { id, destinationUrl, deliveryId: null };
  // The first attempt is due immediately.
  const deliveryId = newId('delivery');
  await insertDelivery(tx, {
    id: deliveryId,
    event_id: id,
    shop_id: input.shopId,
    url: destinationUrl,
    max_attempts: options.maxAttempts ?? MAX_ATTEMPTS,
    next_attempt_at: createdAt,
    locked_until: options.lease?.until ?? null,
    lease_token: options.lease?.token ?? null,
    created_at: createdAt,
    updated_at: createdAt,
  });
  return { id, destinationUrl, deliveryId };
}

/**
 * Shop events (`destination: 'shop'`) as data-modifying CTEs of the caller's ONE
 * statement (payouts created together): each is written only when the anchor
 * CTE holds its `anchorKey`, so it commits with its state change or not at all.
 * `name` prefixes the CTEs (`<name>_event`, `<name>_delivery`).
 */
export function emitManyFrom(
  clock: Clock,
  inputs: readonly (EmitInput & { readonly destination: 'shop'; readonly anchorKey: string })[],
  anchor: CteAnchor,
  name: string,
): RawBuilder<unknown> {
  const createdAt = clock.now();
  const createdAtText = createdAt.toISOString();
  const events = inputs.map((input) => {
    const id = newId('event');
    const payload = JSON.stringify({ id, type: input.type, created_at: createdAtText, data: input.data });
    return {
      id,
      shopId: input.shopId,
      type: input.type,
      payload,
      subjectIds: subjectIdsOf(input.data),
      deliveryId: newId('delivery'),
      anchorKey: input.anchorKey,
    };
  });
  return shopEventsInsertFrom(events, createdAt, MAX_ATTEMPTS, anchor, name);
}

/** Events per statement: each column travels as one array (one json text for the payloads), so this bounds a statement's size, not its parameters. */
const EMIT_CHUNK = 2_000;

/**
 * Many events at once, as `emit` writes them one by one (same rows, same order of
 * creation), in three statements per chunk: the shops' webhook URLs, the events,
 * their deliveries. For batches of state changes (a settlement batch of deposits).
 */
export async function emitMany(tx: Tx, clock: Clock, inputs: readonly EmitInput[]): Promise<void> {
  if (inputs.length === 0) return;
  const shopUrls = await shopWebhookUrls(tx, [
    ...new Set(inputs.filter((input) => input.destination === 'shop').map((input) => input.shopId)),
  ]);
  const createdAt = clock.now();
  const createdAtText = createdAt.toISOString();
  for (let start = 0; start < inputs.length; start += EMIT_CHUNK) {
    const events: Omit<EventInsert, 'created_at'>[] = [];
    const deliveries: Pick<DeliveryInsert, 'id' | 'event_id' | 'shop_id' | 'url'>[] = [];
    for (const input of inputs.slice(start, start + EMIT_CHUNK)) {
      const id = newId('event');
      const destinationUrl = input.destination === 'shop' ? (shopUrls.get(input.shopId) ?? null) : input.destination;
      const payload = JSON.stringify({ id, type: input.type, created_at: createdAtText, data: input.data });
      events.push({
        id,
        shop_id: input.shopId,
        type: input.type,
        payload,
        destination_url: destinationUrl,
        subject_ids: subjectIdsOf(input.data),
      });
      if (destinationUrl === null) continue;
      deliveries.push({ id: newId('delivery'), event_id: id, shop_id: input.shopId, url: destinationUrl });
    }
    await insertEvents(tx, events, createdAt);
    await insertDeliveries(tx, deliveries, createdAt, MAX_ATTEMPTS);
  }
}
