// One place knows whether each dependency the process needs (the database,
// Redis, the TRON nodes) is reachable, as last seen by this process: one
// DependencyHealth per gateway, made by the runtime (AppContext.health). An outage
// is logged once: one warn line when it starts, one info line when it ends, not
// an error with a stack from every worker pass and request in between.
import type { Logger } from 'pino';
import { isDatabaseUnavailable, isDatabaseUnwritable } from '../db/database-errors.ts';
import { TronNodeUnavailableError } from '../crypto/tron/node-errors.ts';

export type Dependency = 'database' | 'redis' | 'chain_nodes';

interface Outage {
  readonly since: number;
  /** The latest failure of this outage. */
  lastFailureAt: number;
  /** The database answers but cannot store anything (full disk, read-only): a read proves nothing. */
  unwritable: boolean;
}

/**
 * How long a database that refused a write for want of storage counts as down when
 * nothing has written since: reads (the readiness check, idle worker passes) cannot tell
 * that space came back, and past this the next write finds out again.
 */
const UNWRITABLE_HOLD_MS = 30_000;

export class DependencyHealth {
  readonly #logger: Logger;
  readonly #outages = new Map<Dependency, Outage>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** The dependency failed: the first failure of an outage is logged, the rest are not. */
  down(dependency: Dependency, error: unknown): void {
    const now = Date.now();
    const unwritable = dependency === 'database' && isDatabaseUnwritable(error);
    const outage = this.#outages.get(dependency);
    if (outage) {
      outage.lastFailureAt = now;
      outage.unwritable ||= unwritable;
      return;
    }
    const reason = describe(error);
    this.#outages.set(dependency, { since: now, lastFailureAt: now, unwritable });
    this.#logger.warn(
      { dependency, reason },
      `${dependency} unreachable: an outage began; what needs it answers 503 until it ends`,
    );
  }

  /**
   * The dependency answered. `askedAt`: when the successful work began (ms); work begun
   * before the latest failure proves nothing about the outage's end. `wrote`: the work
   * stored something, which alone ends an outage of storage.
   */
  up(dependency: Dependency, askedAt: number = Date.now(), wrote = false): void {
    const outage = this.#outages.get(dependency);
    if (!outage || askedAt < outage.lastFailureAt) return;
    if (outage.unwritable && !wrote && Date.now() - outage.lastFailureAt < UNWRITABLE_HOLD_MS) return;
    this.#outages.delete(dependency);
    this.#logger.info(
      { dependency, outage_ms: Date.now() - outage.since },
      `${dependency} reachable again: the outage ended`,
    );
  }

  isDown(dependency: Dependency): boolean {
    return this.#outages.has(dependency);
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

/** The dependency an error says is out of reach, if it says so. */
export function unreachableDependency(error: unknown): Dependency | undefined {
  if (isDatabaseUnavailable(error)) return 'database';
  if (error instanceof TronNodeUnavailableError) return 'chain_nodes';
  return undefined;
}

/**
 * A failed pass or task: an outage of a dependency goes to the tracker (one warn per
 * outage); anything else is a fault of its own and logged as an error with its stack.
 */
export function reportFailure(
  on: { readonly health: DependencyHealth; readonly logger: Logger },
  error: unknown,
  fields: Record<string, unknown>,
  message: string,
): void {
  const dependency = unreachableDependency(error);
  if (dependency) {
    on.health.down(dependency, error);
    on.logger.debug({ ...fields, err: error, dependency }, message);
  } else on.logger.error({ ...fields, err: error }, message);
}
