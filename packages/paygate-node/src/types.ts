// Request and response types of each API operation, read from the generated
// openapi.ts, so that every method of the SDK is typed by the gateway's own document.
import type { operations } from './openapi.ts';

export type OperationId = keyof operations;

type SuccessStatus = 200 | 201 | 202;
type JsonContent<R> = R extends { content: { 'application/json': infer Body } }
  ? Body
  : R extends { content: { 'image/svg+xml': infer Text } }
    ? Text
    : never;
type SuccessResponse<O> = O extends { responses: infer R } ? R[Extract<keyof R, SuccessStatus>] : never;

/** What the operation answers on success (201 and 200 where it has both). */
export type ResponseOf<Op extends OperationId> = JsonContent<SuccessResponse<operations[Op]>>;
/** The JSON body the operation takes. */
export type BodyOf<Op extends OperationId> =
  NonNullable<operations[Op]['requestBody']> extends { content: { 'application/json': infer Body } } ? Body : never;
/** The query parameters the operation takes. */
export type QueryOf<Op extends OperationId> = NonNullable<operations[Op]['parameters']['query']>;
/** One element of a list operation's `data`. */
export type ItemOf<Op extends OperationId> = ResponseOf<Op> extends { data: ReadonlyArray<infer Item> } ? Item : never;

export type Account = ResponseOf<'getAccount'>;
export type Payment = ResponseOf<'getPayment'>;
export type CryptoInvoice = ResponseOf<'getCryptoInvoice'>;
export type CryptoWallet = ResponseOf<'getCryptoWallet'>;
export type CryptoPayout = ResponseOf<'getCryptoPayout'>;
export type CryptoPayoutBatch = ResponseOf<'getCryptoPayoutBatch'>;
export type CryptoRefund = ResponseOf<'getCryptoRefund'>;
export type Balance = ResponseOf<'getBalance'>;
export type WebhookEventRecord = ResponseOf<'getWebhookEvent'>;

/** Per-call options of every method. */
export interface RequestOptions {
  /** The `Idempotency-Key` of a POST; one is generated per call when absent and kept across its retries. */
  readonly idempotencyKey?: string;
  /** Aborts the call (and its retries). */
  readonly signal?: AbortSignal;
}
