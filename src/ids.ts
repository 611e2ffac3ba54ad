// Identifiers: payments are UUIDs (docs/api-decisions.md, Ids); every other resource gets
// a prefixed, time-sortable TypeID (`evt_01h…`), so ids say what they name and
// sort by creation.
import { randomUUID } from 'node:crypto';
import { typeid } from 'typeid-js';

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

export function newUuid(): string {
  return randomUUID();
}
