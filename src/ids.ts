// Identifiers: payments are UUIDs (docs/api-decisions.md, Ids); every other resource gets
// a prefixed, time-sortable TypeID (`evt_01h…`), so ids say what they name and
// sort by creation. Both are UUIDv7 underneath, so new rows land at the right-hand
// edge of their primary-key index instead of at random pages of it.
import { typeid } from 'typeid-js';
import { v7 as uuidv7 } from 'uuid';

const ID_PREFIXES = {
  merchant: 'mer',
  shop: 'shop',
  apiKey: 'key',
  event: 'evt',
  delivery: 'dlv',
  attempt: 'att',
  transfer: 'trf',
  account: 'acc',
  operation: 'op',
  payout: 'po',
  payoutBatch: 'pob',
  invoice: 'inv',
  wallet: 'wal',
  deposit: 'dep',
  refund: 'ref',
  paymentAttempt: 'pat',
  paymentRefund: 'prf',
  acquirerConnection: 'acq',
  outgoingTransfer: 'otx',
  withdrawal: 'wd',
  withdrawalAddress: 'wda',
  sweep: 'swp',
  custodyReconciliation: 'rec',
  custodyAcknowledgement: 'ack',
  coldMove: 'cold',
  energyRental: 'rent',
  user: 'user',
  cabinetSession: 'ses',
  teamInvite: 'invt',
  auditEvent: 'aud',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind): string {
  return typeid(ID_PREFIXES[kind]).toString();
}

// RFC 9562 UUIDv7: 48-bit Unix milliseconds, then a counter that keeps ids made within
// one millisecond (or while the clock steps back) strictly increasing in this process.
export function newUuid(): string {
  return uuidv7();
}
