// Single payouts created by concurrent requests read and commit together
// (db/statement-batcher.ts): one statement reads what their creations need to know
// first (readCreationState), one statement writes the reservations, outgoing transfers, payouts, idempotency
// records and webhook events of up to MAX_BATCH payouts. Each payout stands or
// falls on its own reservation inside that statement (not enough funds leaves the
// others written; one merchant's payouts are taken in order while its balance
// affords them); a statement that fails (a duplicate external_id, say) is run
// again payout by payout, so the error is its owner's.
import type { RawBuilder } from 'kysely';
import { auditEventsInsertFrom, type AuditEventInput } from '../../audit/audit-service.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/transaction.ts';
import { statementCertainlyRolledBack } from '../../db/database-errors.ts';
import { StatementBatcher } from '../../db/statement-batcher.ts';
import { recordsInsertFrom, type NewIdempotencyRecord } from '../../idempotency/idempotency-service.ts';
import { fanOutReservations, type FanOutReservation } from '../../ledger/ledger-service.ts';
import { emitManyFrom } from '../../webhooks/outbox.ts';
import { enqueueOutgoingTransfersFrom, type OutgoingTransferRequest } from '../sending/outgoing-transfers.ts';
import { PAYOUT_UPDATED } from './payouts-events.ts';
import * as repository from './payouts-repository.ts';
import type { PayoutRow } from './payouts-repository.ts';
import { payoutView } from './payouts-views.ts';

/** What one payout's creation writes. */
export interface PayoutCreation {
  /** The new row, pending, naming its outgoing transfer. */
  readonly payout: PayoutRow;
  /** Its reservation; `reference.id` is the payout's id. */
  readonly fanOut: FanOutReservation;
  readonly outgoing: OutgoingTransferRequest;
  /** Its completed idempotency record, naming the payout. */
  readonly record: NewIdempotencyRecord;
  /** The audit event of a payout a person asked for (the cabinet's form), written with the payout or not at all. */
  readonly audit?: AuditEventInput | undefined;
}

/** Payouts per statement (read or write): a statement of 100 takes PostgreSQL a few milliseconds. */
const MAX_BATCH = 100;
/**
 * Statements at once (of each kind): one runs while the next fills up. Measured
 * (bench:payouts, 50 merchants): 1 → ratio 0.70, 2 → 0.52, 3 → 0.45; fewer,
 * fuller statements cost both processes less per payout.
 */
const MAX_IN_FLIGHT = 1;
/**
 * A statement running longer than this (a statement takes a few milliseconds;
 * one waiting on a merchant's balance row held by another transaction, or on a
 * dead connection, takes up to lock_timeout or for ever) no longer holds back
 * the payouts queued behind it: the next statement starts beside it.
 */
const STALL_MS = 200;

/**
 * Writes the payouts in ONE statement: the row of each payout written, or
 * undefined for one whose reservation was refused (then nothing of it was written).
 */
async function writePayoutCreations(
  db: Db,
  clock: Clock,
  creations: readonly PayoutCreation[],
): Promise<(PayoutRow | undefined)[]> {
  const rows = (await payoutCreationsStatement(clock, creations).execute(db)).rows;
  const written = new Map(rows.map((row) => [row.id, row]));
  return creations.map((creation) => written.get(creation.payout.id));
}

/** writePayoutCreations' statement: the same text for any number of payouts (prepared once per connection). */
export function payoutCreationsStatement(clock: Clock, creations: readonly PayoutCreation[]): RawBuilder<PayoutRow> {
  const { ctes, writtenCte } = fanOutReservations(
    clock,
    creations.map((creation) => creation.fanOut),
  );
  const payoutsAnchor = { cte: repository.NEW_PAYOUTS_CTE, column: 'id' };
  return repository.reservedPayoutsStatement({
    reservation: ctes,
    outgoing: enqueueOutgoingTransfersFrom(
      clock,
      creations.map(({ payout, outgoing }) => ({
        id: payout.outgoing_transfer_id,
        request: outgoing,
        anchorKey: payout.id,
      })),
      { cte: writtenCte, column: 'reference_id' },
    ),
    payouts: creations.map((creation) => creation.payout),
    records: recordsInsertFrom(
      creations.map((creation) => creation.record),
      payoutsAnchor,
    ),
    dependents: [
      ...auditedFrom(clock, creations, payoutsAnchor),
      emitManyFrom(
        clock,
        creations.map(({ payout }) => ({
          shopId: payout.shop_id,
          type: PAYOUT_UPDATED,
          data: payoutView(payout),
          destination: 'shop' as const,
          anchorKey: payout.id,
        })),
        payoutsAnchor,
        'payout_updated',
      ),
    ],
  });
}

/** The audit events' CTE when a creation carries one (API creations carry none: their statement stays as it was). */
function auditedFrom(
  clock: Clock,
  creations: readonly PayoutCreation[],
  anchor: { cte: string; column: string },
): RawBuilder<unknown>[] {
  const events = creations.flatMap(({ payout, audit }) => (audit ? [{ ...audit, anchorKey: payout.id }] : []));
  return events.length === 0 ? [] : [auditEventsInsertFrom(clock, events, anchor, 'payout_audit')];
}

/** The statement batchers of payout creation: one per payouts module (its database and clock). */
export interface PayoutCreationBatches {
  /** What creating this payout reads first (repository.findCreationStates), read together with concurrent creations'. */
  readCreationState(query: repository.CreationQuery): Promise<repository.CreationState>;
  /**
   * Creates the payout together with those of concurrent requests: its row, or undefined
   * when its reservation was refused (nothing of it written; explainUnwrittenReservation says why).
   */
  commitPayoutCreation(creation: PayoutCreation): Promise<PayoutRow | undefined>;
}

export function createPayoutCreationBatches(db: Db, clock: Clock): PayoutCreationBatches {
  const reads = new StatementBatcher<repository.CreationQuery, repository.CreationState>({
    run: (queries) => repository.findCreationStates(db, queries),
    rerunAlone: () => true, // a read: running it again is harmless
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    stallMs: STALL_MS,
  });
  const commits = new StatementBatcher<PayoutCreation, PayoutRow | undefined>({
    run: (creations) => writePayoutCreations(db, clock, creations),
    // Only a statement the server refused is split: one that may have committed is not written again.
    rerunAlone: statementCertainlyRolledBack,
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    stallMs: STALL_MS,
  });
  return {
    readCreationState: (query) => reads.submit(query),
    commitPayoutCreation: (creation) => commits.submit(creation),
  };
}
