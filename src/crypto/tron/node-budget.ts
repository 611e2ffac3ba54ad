// A request budget for one node URL: a token bucket of `burst` tokens refilled
// at `requestsPerSecond`, kept as the generic cell rate algorithm (one number,
// the theoretical arrival time) so that a request is given the moment its token
// becomes free instead of polling. Requests are served in the order they
// reserve, and a reservation is never handed out past the caller's limit.
// Pure arithmetic on a time the caller passes in: tests drive it with numbers.

export interface NodeBudgetSettings {
  /** Tokens added per second (the provider's per-second limit). */
  readonly requestsPerSecond: number;
  /** Tokens the bucket holds when full: requests that may go at once after a quiet spell. */
  readonly burst: number;
}

export interface NodeBudget {
  /** When a request asked for at `at` may go, without taking a token. */
  peek(at: number): number;
  /**
   * Takes the next token: the time the request may go (≥ `at`), or undefined,
   * taking nothing, when that is later than `latest`.
   */
  reserve(at: number, latest: number): number | undefined;
}

const DRIFT_MS = 1e-6;

export function createNodeBudget(settings: NodeBudgetSettings): NodeBudget {
  const { requestsPerSecond, burst } = settings;
  if (!(Number.isFinite(requestsPerSecond) && requestsPerSecond > 0))
    throw new Error(`a node budget needs requestsPerSecond > 0, got ${requestsPerSecond}`);
  if (!(Number.isSafeInteger(burst) && burst >= 1))
    throw new Error(`a node budget needs a whole burst ≥ 1, got ${burst}`);
  const intervalMs = 1000 / requestsPerSecond;
  /** How far ahead of its theoretical time a request may go: the burst's other tokens. */
  const toleranceMs = (burst - 1) * intervalMs;
  /** When the next token would be free if requests came exactly at the rate. */
  let theoreticalArrival = Number.NEGATIVE_INFINITY;

  // Sums of fractional intervals drift by parts of a nanosecond: that much is no wait.
  const grantTime = (at: number) => {
    const free = theoreticalArrival - toleranceMs;
    return free - at > DRIFT_MS ? free : at;
  };
  return {
    peek: grantTime,
    reserve(at, latest) {
      const grant = grantTime(at);
      if (grant > latest) return undefined;
      theoreticalArrival = Math.max(theoreticalArrival, grant) + intervalMs;
      return grant;
    },
  };
}
