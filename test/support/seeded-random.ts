// Randomness in tests is reproducible: a random workload draws from a seeded
// generator whose seed is printed when the test fails, and rerunning with
// PAYGATE_TEST_SEED=<seed> replays the same draws. Names that only have to be
// unique (external ids, merchant names) take no randomness at all.
import { onTestFailed } from 'vitest';

const SEED_VARIABLE = 'PAYGATE_TEST_SEED';
const DEFAULT_SEED = 20_251_127;

/** A generator of numbers in [0, 1), like Math.random, but seeded (mulberry32). */
export type Random = () => number;

function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The run's seed: PAYGATE_TEST_SEED when set, a fixed one otherwise. */
function testSeed(): number {
  const configured = process.env[SEED_VARIABLE];
  if (configured === undefined || configured === '') return DEFAULT_SEED;
  const seed = Number(configured);
  if (!Number.isSafeInteger(seed)) throw new Error(`${SEED_VARIABLE} must be an integer, got ${configured}`);
  return seed;
}

/**
 * Seeded generators for the test that calls it (inside `it`), one stream per
 * concurrent client so each client's draws do not depend on scheduling; the
 * seed is printed if that test fails, so the failing draws can be replayed.
 */
export function randomStreamsForThisTest(): (stream: number) => Random {
  const seed = testSeed();
  onTestFailed(() => {
    process.stderr.write(
      `random draws of the failed test came from seed ${seed}: rerun with ${SEED_VARIABLE}=${seed}\n`,
    );
  });
  return (stream) => seededRandom(seed + stream);
}

/** One seeded generator for the test that calls it; see randomStreamsForThisTest. */
export function randomForThisTest(): Random {
  return randomStreamsForThisTest()(0);
}

/** An integer in [0, bound). */
export function randomIndex(random: Random, bound: number): number {
  return Math.floor(random() * bound);
}

// Unique across processes and runs (a PostgreSQL test server keeps earlier runs'
// rows in databases other tests may share), without drawing random numbers.
const RUN_TAG = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let uniqueCounter = 0;

/** A name no other call of this or any other test process has produced: `<label>-<run>-<n>`. */
export function uniqueName(label: string): string {
  uniqueCounter += 1;
  return `${label}-${RUN_TAG}-${uniqueCounter}`;
}
