// Group commit: writes that concurrent requests would each make in a statement
// of their own go to the database together, in one statement. Idle, a write
// starts at once, alone; while `maxInFlight` statements run, arrivals queue and
// leave together in the next one. So under load the statements (and their
// commits, plans and round trips) are shared, and alone nothing waits.
// Items with the same key never share a statement (two payouts of one merchant
// would update its balance row twice): the later one waits for the next.

export interface GroupCommitOptions<I, O> {
  /** Writes the items in one statement; the outcome of each, in the order given. */
  readonly write: (items: readonly I[]) => Promise<readonly O[]>;
  /** Items with equal keys are never written by one statement. */
  readonly keyOf: (item: I) => string;
  /** Most items per statement. */
  readonly maxBatch: number;
  /** Most statements running at once. */
  readonly maxInFlight: number;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (outcome: O) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommit<I, O> {
  readonly #options: GroupCommitOptions<I, O>;
  #queue: Waiting<I, O>[] = [];
  #inFlight = 0;

  constructor(options: GroupCommitOptions<I, O>) {
    if (!(options.maxBatch >= 1 && options.maxInFlight >= 1)) throw new Error('group commit: maxBatch and maxInFlight are at least 1');
    this.#options = options;
  }

  /** The item's outcome once its statement has run; a statement of several that failed is run again item by item, so an error is the item's own. */
  write(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#start();
    });
  }

  #start(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#queue.length > 0) {
      this.#inFlight++;
      void this.#run(this.#take());
    }
  }

  /** The first items of the queue with distinct keys, at most maxBatch; the rest keep their order. */
  #take(): Waiting<I, O>[] {
    const keys = new Set<string>();
    const batch: Waiting<I, O>[] = [];
    const rest: Waiting<I, O>[] = [];
    for (const waiting of this.#queue) {
      const key = this.#options.keyOf(waiting.item);
      if (batch.length < this.#options.maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(waiting);
      } else {
        rest.push(waiting);
      }
    }
    this.#queue = rest;
    return batch;
  }

  async #run(batch: readonly Waiting<I, O>[]): Promise<void> {
    try {
      const outcomes = await this.#writeAll(batch);
      batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
    } catch (error) {
      if (batch.length === 1) batch[0]!.reject(error);
      // One item's error (a duplicate key, say) failed the statement of all: each is written alone.
      else await Promise.all(batch.map((waiting) => this.#writeAll([waiting]).then((outcomes) => waiting.resolve(outcomes[0]!), waiting.reject)));
    } finally {
      this.#inFlight--;
      this.#start();
    }
  }

  async #writeAll(batch: readonly Waiting<I, O>[]): Promise<readonly O[]> {
    const outcomes = await this.#options.write(batch.map((waiting) => waiting.item));
    if (outcomes.length !== batch.length) throw new Error(`group commit: ${outcomes.length} outcomes for ${batch.length} items`);
    return outcomes;
  }
}
