// The errors the SDK throws: the gateway's refusals, carrying its body
// `{error, message, request_id}` and the HTTP status, and failures to get any answer.

export class PaygateError extends Error {
  override readonly name: string = 'PaygateError';
  /** The stable code to branch on (`not_found`, `invalid_request`, `rate_limited`, …). */
  readonly error: string;
  /** The HTTP status; undefined when no answer arrived. */
  readonly status: number | undefined;
  /** The request's id (the `x-request-id` header): quote it to the gateway's operator. */
  readonly request_id: string | undefined;
  /** The parsed error body as the gateway sent it. */
  readonly body: unknown;

  constructor(fields: {
    error: string;
    message: string;
    status: number | undefined;
    request_id: string | undefined;
    body?: unknown;
    cause?: unknown;
  }) {
    super(fields.message, { cause: fields.cause });
    this.error = fields.error;
    this.status = fields.status;
    this.request_id = fields.request_id;
    this.body = fields.body;
  }
}

/** No answer: the connection failed or timed out on every attempt. */
export class PaygateConnectionError extends PaygateError {
  override readonly name = 'PaygateConnectionError';

  constructor(message: string, cause: unknown) {
    super({ error: 'connection_error', message, status: undefined, request_id: undefined, cause });
  }
}

/** A webhook whose signature, timestamp or headers do not check out: answer it 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}
