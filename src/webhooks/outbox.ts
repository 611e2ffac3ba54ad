// The outbox: modules call `emit` inside the transaction of the state change,
// so the change and its event commit together or not at all. Nothing is sent
// here; delivery workers pick the event up after commit.
import type { Clock } from '../clock.ts';
import type { Tx } from '../db/transaction.ts';
import { newId } from '../ids.ts';

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

export async function emit(tx: Tx, clock: Clock, input: EmitInput): Promise<EmittedEvent> {
  const id = newId('event');
  const createdAt = clock.now();
  const destinationUrl =
    input.destination === 'shop'
      ? ((await tx.selectFrom('shops').select('webhook_url').where('id', '=', input.shopId).executeTakeFirst())?.webhook_url ?? null)
      : input.destination;
  const payload = JSON.stringify({ id, type: input.type, created_at: createdAt.toISOString(), data: input.data });
  await tx
    .insertInto('webhook_events')
    .values({ id, shop_id: input.shopId, type: input.type, payload, destination_url: destinationUrl, created_at: createdAt })
    .execute();
  return { id, destinationUrl };
}
