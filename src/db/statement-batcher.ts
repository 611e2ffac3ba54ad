// Group commit, and its twin for reads: the statements concurrent requests would
// each run alone go to the database as one. Idle, an item's statement starts at
// once, alone; while `maxInFlight` statements run, arrivals queue and leave
// together in the next one. So under load the statements (their round trips,
// plans and commits) are shared, and alone nothing waits.

export interface StatementBatcherOptions<I, O> {
  /** Runs the statement of these items; the outcome of each, in the order given. */
  readonly run: (items: readonly I[]) => Promise<readonly O[]>;
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

export class StatementBatcher<I, O> {
  readonly #options: StatementBatcherOptions<I, O>;
  readonly #queue: Waiting<I, O>[] = [];
  #inFlight = 0;

  constructor(options: StatementBatcherOptions<I, O>) {
    if (!(options.maxBatch >= 1 && options.maxInFlight >= 1)) throw new Error('statement batcher: maxBatch and maxInFlight are at least 1');
    this.#options = options;
  }

  /** The item's outcome once its statement has run; a statement of several that failed is run again item by item, so an error is the item's own. */
  submit(item: I): Promise<O> {
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

  /** The first maxBatch items of the queue, in order. */
  #take(): Waiting<I, O>[] {
    return this.#queue.splice(0, this.#options.maxBatch);
  }

  async #run(batch: readonly Waiting<I, O>[]): Promise<void> {
    try {
      const outcomes = await this.#runAll(batch);
      batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
    } catch (error) {
      if (batch.length === 1) batch[0]!.reject(error);
      // One item's error (a duplicate key, say) failed the statement of all: each runs alone.
      else await Promise.all(batch.map((waiting) => this.#runAll([waiting]).then((outcomes) => waiting.resolve(outcomes[0]!), waiting.reject)));
    } finally {
      this.#inFlight--;
      this.#start();
    }
  }

  async #runAll(batch: readonly Waiting<I, O>[]): Promise<readonly O[]> {
    const outcomes = await this.#options.run(batch.map((waiting) => waiting.item));
    if (outcomes.length !== batch.length) throw new Error(`statement batcher: ${outcomes.length} outcomes for ${batch.length} items`);
    return outcomes;
  }
}
