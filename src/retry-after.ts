// Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. One reading for
// every peer Paygate waits on — webhook receivers, TRON nodes, acquirers, the
// gateway `paygate listen` follows — so each accepts the same forms; each caller
// caps the wait by its own bound.

/** IMF-fixdate, the HTTP-date form senders must use ("Sun, 06 Nov 1994 08:49:37 GMT"); V8's lenient Date.parse alone takes almost anything. */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * Milliseconds to wait from `now`, or undefined when the header is absent or
 * malformed. Seconds may carry a fraction (some acquirers send one); a date in
 * the past means no wait.
 */
export function retryAfterMs(header: string | readonly string[] | null | undefined, now: Date): number | undefined {
  const raw = typeof header === 'string' ? header : header?.[0];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (/^\d{1,10}(\.\d{1,3})?$/.test(value)) return Math.round(Number(value) * 1000);
  if (!HTTP_DATE.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}
