// Transfers the signing key cannot sign (it does not derive the sending address:
// a restored database, a rotated key, an address no key controls; or a transfer
// that cannot be built). Each is held alone, queued and unsigned, so the rest of
// its pass is signed: never sent, rechecked only every UNSIGNABLE_RECHECK_MS (not
// every pass), an error logged with its id and the
// paygate_outgoing_transfers_unsignable_total counter raised at each sighting.
// One holding a merchant's money reserved (payout, refund, withdrawal) waits as
// with no signing key at all, then fails signer_unavailable so its owner voids
// the reservation; the gateway's own housekeeping (sweeps, top-ups, cold moves,
// delegations) stays held for an operator.
import type { ExecutorContext, ExecutorPassResult } from './executor-context.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';
import { sourceOf } from './signing-decisions.ts';
import type { PrivateKeyOf, Unsignable } from './unsigned-transfer.ts';
import { handleWaiting, holdsReservation } from './waiting-transfers.ts';

/** How long a transfer found unsignable is left out of passes before it is tried again (a key fixed by an operator is picked up then). */
export const UNSIGNABLE_RECHECK_MS = 10 * 60_000;

/** Transfers whose error is logged by id in one pass (the rest are counted). */
const LOGGED_PER_PASS = 10;

/** The queued transfers whose key the pass has, and those it cannot sign (checked before any energy is arranged for them). */
export function splitSignable(
  context: Pick<ExecutorContext, 'hotWallet'>,
  queued: readonly OutgoingTransferRow[],
  privateKeyOf: PrivateKeyOf,
): { signable: OutgoingTransferRow[]; unsignable: Unsignable[] } {
  const signable: OutgoingTransferRow[] = [];
  const unsignable: Unsignable[] = [];
  for (const row of queued) {
    try {
      privateKeyOf(row, sourceOf(context, row));
      signable.push(row);
    } catch (error) {
      unsignable.push({ row, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { signable, unsignable };
}

/** Holds each unsignable transfer until its recheck; those holding a merchant's reservation wait, then fail. */
export async function holdUnsignable(
  context: ExecutorContext,
  unsignable: readonly Unsignable[],
  now: Date,
  result: ExecutorPassResult,
): Promise<void> {
  if (unsignable.length === 0) return;
  await repository.setUnsignable(
    context.db,
    unsignable.map(({ row }) => row.id),
    now,
  );
  result.unsignable += unsignable.length;
  context.logger.error(
    {
      chain: context.chain,
      unsignable: unsignable.length,
      transfers: unsignable.slice(0, LOGGED_PER_PASS).map(({ row, reason }) => ({
        transfer_id: row.id,
        purpose: row.purpose,
        from: row.from_address ?? 'hot_wallet',
        reason,
      })),
    },
    'outgoing transfers held unsigned: the signing key cannot sign them (the rest are signed); import the key that derives their addresses',
  );
  const reserving = unsignable.filter(({ row }) => holdsReservation(row)).map(({ row }) => row);
  await handleWaiting(context, reserving, now, result, {
    code: 'signer_unavailable',
    message: 'the signing key does not derive the sending address',
  });
}
