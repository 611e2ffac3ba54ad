// Faults a real TRON node shows, switched on by tests (docs/tron.md §3 "mempool
// realism", §1.8): slow answers past the client's timeout, HTTP 503,
// SERVER_BUSY, a broadcast answered SUCCESS that never lands, a head that
// stops moving or trails the chain, a node with its transaction history
// switched off, a node that hides transactions, `{}` from a node syncing from
// scratch, Transfer logs attributed to another contract, and a request-rate
// limit. A count applies the fault to that many matching requests; `true`
// until cleared.
import type { TronAddress } from '../tron/address.ts';

/**
 * How a rate-limited node says no. `http429`: HTTP 429 with Retry-After
 * (TronGrid's documented answer to a key over its rate). `trongrid`: HTTP 403
 * `{"Error": "The key exceeds the frequency limit(N), and the query server is
 * suspended for Ss"}` (TronGrid's full-node answer, its rate-limit docs).
 * `java-tron`: HTTP 200 `{"Error": "class java.lang.IllegalAccessException :
 * lack of computing resources"}` (java-tron's RateLimiterServlet.service with
 * Util.printErrorMsg).
 */
type RateLimitAnswer = 'http429' | 'trongrid' | 'java-tron';

export interface RateLimitSettings {
  readonly requestsPerSecond: number;
  /** Requests served at once after a quiet spell; default requestsPerSecond (Guava's RateLimiter.create, which java-tron's QpsStrategy uses, stores one second of permits). */
  readonly burst?: number;
  readonly answer?: RateLimitAnswer;
  /** After a refusal every request is refused this long (TronGrid suspends a key that went over); default 0. */
  readonly suspendSeconds?: number;
}

export interface NodeFaultSettings {
  /** Answer this late (after doing the work: a timed-out broadcast may still land). */
  readonly delayMs?: number;
  /** Paths the delay applies to; all when left out. */
  readonly delayPaths?: readonly string[];
  readonly http503?: boolean | number;
  /** `/wallet/broadcasthex` answers SERVER_BUSY without looking at the transaction. */
  readonly serverBusy?: boolean | number;
  /** Broadcasts are checked and answered SUCCESS, then lost: never included. */
  readonly neverInclude?: boolean | number;
  /** The node answers as if its head were this block (a lagging or stuck node). */
  readonly stuckHeadAt?: number;
  /** The node is this many blocks behind the chain (head and solidified block alike): a lagging node. */
  readonly lagBlocks?: number;
  /**
   * Paths the lag applies to; all when left out. A load-balanced provider may answer
   * getnowblock from an up-to-date backend and block queries from a lagging one.
   */
  readonly lagPaths?: readonly string[];
  /**
   * `storage.transHistory.switch = off`: java-tron's TransactionHistoryStore and TransactionRetStore
   * drop every put, so gettransactioninfobyid answers `{}` and gettransactioninfobyblocknum `[]`
   * (Wallet.getTransactionInfoByBlockNum finds no result for the block's transactions).
   */
  readonly historyOff?: boolean;
  /** A lying node: blocks shown without their transactions, their results `[]`, any transaction by id `{}`. */
  readonly hideTransactions?: boolean;
  /** getnowblock answers `{}` (a node with no block yet). */
  readonly emptyNowBlock?: boolean;
  /** Logs are reported as emitted by this contract instead of the real one (a lying node). */
  readonly foreignLogContract?: TronAddress;
  /** Serve at most this many requests per second (wall-clock time); refuse the rest. */
  readonly rateLimit?: RateLimitSettings;
}

type CountedFault = 'http503' | 'serverBusy' | 'neverInclude';

export class NodeFaults {
  #settings: { -readonly [K in keyof NodeFaultSettings]: NodeFaultSettings[K] } = {};
  readonly #now: () => number;
  /** The rate limit's bucket: tokens left at `refilledAtMs`, and the end of a suspension. */
  #bucket = { tokens: 0, refilledAtMs: 0, suspendedUntilMs: 0 };
  #rateLimited = 0;

  /** `now`: monotonic milliseconds for the rate limit (wall clock by default). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Adds to (or changes) the active faults; `undefined` values clear one. A new rate limit starts with a full bucket. */
  set(settings: NodeFaultSettings): void {
    this.#settings = { ...this.#settings, ...settings };
    if ('rateLimit' in settings && settings.rateLimit) {
      this.#bucket = {
        tokens: settings.rateLimit.burst ?? settings.rateLimit.requestsPerSecond,
        refilledAtMs: this.#now(),
        suspendedUntilMs: 0,
      };
    }
  }

  clear(): void {
    this.#settings = {};
  }

  /** Requests refused by the rate limit so far. */
  get rateLimitedCount(): number {
    return this.#rateLimited;
  }

  /** Whether the rate limit refuses this request (a served one takes a token), and how to say so. */
  takeRateLimited(): RateLimitSettings | undefined {
    const limit = this.#settings.rateLimit;
    if (!limit) return undefined;
    const at = this.#now();
    const bucket = this.#bucket;
    const capacity = limit.burst ?? limit.requestsPerSecond;
    bucket.tokens = Math.min(capacity, bucket.tokens + ((at - bucket.refilledAtMs) * limit.requestsPerSecond) / 1000);
    bucket.refilledAtMs = at;
    if (at >= bucket.suspendedUntilMs && bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    if (at >= bucket.suspendedUntilMs) bucket.suspendedUntilMs = at + (limit.suspendSeconds ?? 0) * 1000;
    this.#rateLimited += 1;
    return limit;
  }

  get settings(): NodeFaultSettings {
    return this.#settings;
  }

  /** Whether a counted fault applies to this request (using one count up). */
  take(fault: CountedFault): boolean {
    const value = this.#settings[fault];
    if (value === true) return true;
    if (typeof value === 'number' && value > 0) {
      this.#settings = { ...this.#settings, [fault]: value - 1 };
      return true;
    }
    return false;
  }

  /** How many blocks behind the chain this node answers `path`. */
  lagFor(path: string): number {
    const { lagBlocks, lagPaths } = this.#settings;
    if (!lagBlocks || lagBlocks <= 0) return 0;
    return lagPaths === undefined || lagPaths.includes(path) ? lagBlocks : 0;
  }

  delayFor(path: string): number {
    const { delayMs, delayPaths } = this.#settings;
    if (!delayMs || delayMs <= 0) return 0;
    return delayPaths === undefined || delayPaths.includes(path) ? delayMs : 0;
  }
}
