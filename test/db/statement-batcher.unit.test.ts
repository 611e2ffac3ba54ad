// Group commit (src/db/statement-batcher.ts): idle, a write goes alone at once; while
// statements run, arrivals leave together in the next one, in order, at most
// maxBatch to a statement; a failed statement of several is run again
// item by item so each error reaches only its own item.
import { describe, expect, it, vi } from 'vitest';
import { statementCertainlyRolledBack } from '../../src/db/database-errors.ts';
import { StatementBatcher } from '../../src/db/statement-batcher.ts';

interface Item {
  readonly key: string;
  readonly value: number;
}

/** A writer whose statements finish when the test says so, recording what each held. */
function controlledWriter(fail?: (items: readonly Item[]) => boolean) {
  const statements: Item[][] = [];
  const finishers: (() => void)[] = [];
  const write = (items: readonly Item[]) =>
    new Promise<number[]>((resolve, reject) => {
      statements.push([...items]);
      finishers.push(() =>
        fail?.(items)
          ? reject(new Error(`statement of ${items.map((item) => item.value).join(',')} failed`))
          : resolve(items.map((item) => item.value * 10)),
      );
    });
  /** Lets every statement started so far finish, and the promise callbacks run. */
  const finishAll = async () => {
    for (const finish of finishers.splice(0)) finish();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { statements, write, finishAll };
}

const options = { rerunAlone: () => true, maxBatch: 100, maxInFlight: 1, stallMs: 60_000 };

describe('statement batcher (group commit)', () => {
  it('an idle write goes at once, alone; arrivals meanwhile share the next statement, at most maxInFlight at once', async () => {
    const writer = controlledWriter();
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write });
    const first = commits.submit({ key: 'a', value: 1 });
    expect(writer.statements).toEqual([[{ key: 'a', value: 1 }]]);
    const later = [2, 3, 4].map((value) => commits.submit({ key: `k${value}`, value }));
    expect(writer.statements).toHaveLength(1); // the one in flight holds the line
    await writer.finishAll();
    expect(await first).toBe(10);
    expect(writer.statements[1]!.map((item) => item.value)).toEqual([2, 3, 4]);
    await writer.finishAll();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(writer.statements).toHaveLength(2);
  });

  it('at most maxBatch items per statement; the others keep their order for the next', async () => {
    const writer = controlledWriter();
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write, maxBatch: 3 });
    const blocker = commits.submit({ key: 'x', value: 0 });
    const writes = [1, 2, 3, 4, 5, 6, 7].map((value) => commits.submit({ key: 'a', value }));
    for (let round = 0; round < 5; round++) await writer.finishAll();
    await blocker;
    expect(await Promise.all(writes)).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(writer.statements.map((statement) => statement.map((item) => item.value))).toEqual([
      [0],
      [1, 2, 3],
      [4, 5, 6],
      [7],
    ]);
  });

  it('two statements in flight when allowed', async () => {
    const writer = controlledWriter();
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write, maxInFlight: 2 });
    const writes = [1, 2, 3].map((value) => commits.submit({ key: `k${value}`, value }));
    expect(writer.statements.map((statement) => statement.map((item) => item.value))).toEqual([[1], [2]]);
    for (let round = 0; round < 3; round++) await writer.finishAll();
    expect(await Promise.all(writes)).toEqual([10, 20, 30]);
    expect(writer.statements.map((statement) => statement.map((item) => item.value))).toEqual([[1], [2], [3]]);
  });

  it('a failed statement of several is run again item by item: only the culprit fails', async () => {
    const writer = controlledWriter((items) => items.some((item) => item.value === 3));
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write });
    const blocker = commits.submit({ key: 'x', value: 0 });
    const writes = [2, 3, 4].map((value) =>
      commits.submit({ key: `k${value}`, value }).then(
        (outcome) => ({ outcome }),
        (error: Error) => ({ error: error.message }),
      ),
    );
    for (let round = 0; round < 4; round++) await writer.finishAll();
    await blocker;
    expect(await Promise.all(writes)).toEqual([{ outcome: 20 }, { error: 'statement of 3 failed' }, { outcome: 40 }]);
    expect(writer.statements.map((statement) => statement.map((item) => item.value))).toEqual([
      [0],
      [2, 3, 4],
      [2],
      [3],
      [4],
    ]);
  });

  it('a lone item that fails is not written twice', async () => {
    const writer = controlledWriter(() => true);
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write });
    const failure = commits.submit({ key: 'a', value: 1 }).catch((error: unknown) => error);
    await writer.finishAll();
    expect(await failure).toEqual(new Error('statement of 1 failed'));
    expect(writer.statements).toHaveLength(1);
  });

  it("refuses a write function that answers for the wrong number of items, as the items' error", async () => {
    const commits = new StatementBatcher<Item, number>({ ...options, run: async () => [] });
    await expect(commits.submit({ key: 'a', value: 1 })).rejects.toThrow('0 outcomes for 1 items');
  });

  it('a failed statement whose outcome is unknown is not run again: every item gets its error', async () => {
    const writer = controlledWriter((items) => items.length > 1);
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write, rerunAlone: () => false });
    const blocker = commits.submit({ key: 'x', value: 0 });
    const writes = [2, 3].map((value) =>
      commits.submit({ key: `k${value}`, value }).catch((error: Error) => error.message),
    );
    for (let round = 0; round < 3; round++) await writer.finishAll();
    await blocker;
    expect(await Promise.all(writes)).toEqual(['statement of 2,3 failed', 'statement of 2,3 failed']);
    expect(writer.statements).toHaveLength(2);
  });

  it('items arriving while a failed statement runs item by item are not held back by it', async () => {
    const writer = controlledWriter((items) => items.length > 1);
    const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write });
    const blocker = commits.submit({ key: 'x', value: 0 });
    const failing = [2, 3].map((value) =>
      commits.submit({ key: `k${value}`, value }).catch((error: Error) => error.message),
    );
    await writer.finishAll(); // 0 done; [2, 3] starts
    await writer.finishAll(); // [2, 3] fails; 2 and 3 start alone
    expect(writer.statements.map((statement) => statement.map((item) => item.value))).toEqual([[0], [2, 3], [2], [3]]);
    const later = commits.submit({ key: 'k9', value: 9 });
    expect(writer.statements.at(-1)!.map((item) => item.value)).toEqual([9]); // started beside the lone runs
    await writer.finishAll();
    await blocker;
    expect(await Promise.all([...failing, later])).toEqual([20, 30, 90]);
  });

  it('a statement running past stallMs no longer holds the queue: the next starts beside it, and both finish', async () => {
    // The stall timer is driven, not waited for: just before stallMs nothing moves, at stallMs the queue does.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const writer = controlledWriter();
      const commits = new StatementBatcher<Item, number>({ ...options, run: writer.write, stallMs: 20 });
      const stuck = commits.submit({ key: 'a', value: 1 });
      const queued = [2, 3].map((value) => commits.submit({ key: `k${value}`, value }));
      expect(writer.statements).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(19);
      expect(writer.statements).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(writer.statements.map((statement) => statement.map((item) => item.value))).toEqual([[1], [2, 3]]);
      await writer.finishAll();
      expect(await Promise.all([stuck, ...queued])).toEqual([10, 20, 30]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('statementCertainlyRolledBack', () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });
  it('true for a statement the server refused, false when the outcome is unknown', () => {
    for (const code of ['23505', '40P01', '55P03', '57014', '22003'])
      expect(statementCertainlyRolledBack(withCode(code)), code).toBe(true);
    for (const code of ['08006', '08003', '57P01', 'ECONNRESET'])
      expect(statementCertainlyRolledBack(withCode(code)), code).toBe(false);
    expect(statementCertainlyRolledBack(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(statementCertainlyRolledBack('not an error')).toBe(false);
  });
});
