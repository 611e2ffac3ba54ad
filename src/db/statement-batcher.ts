// Group commit, and its twin for reads: the statements concurrent requests would
// each run alone go to the database as one. Idle, an item's statement starts at
// once, alone; while `maxInFlight` statements run, arrivals queue and leave
// together in the next one. So under load the statements (their round trips,
// plans and commits) are shared, and alone nothing waits.
// A statement that runs past `stallMs` (a lock wait, a dead connection) gives
// up its place, so the queue behind it moves on without it.

export interface StatementBatcherOptions<I, O> {
  /** Runs the statement of these items; the outcome of each, in the order given. */
  readonly run: (items: readonly I[]) => Promise<readonly O[]>;
  /**
   * Whether a statement of several that failed with this error is run again item
   * by item, so each item gets its own outcome. Only when the error proves the
   * statement wrote nothing: a write whose outcome is unknown (the connection
   * dropped around COMMIT) must not run again.
   */
  readonly rerunAlone: (error: unknown) => boolean;
  /** Most items per statement. */
  readonly maxBatch: number;
  /** Most statements running at once, not counting those past stallMs. */
  readonly maxInFlight: number;
  /** After this long a running statement no longer holds the queue back. */
  readonly stallMs: number;
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
    if (!(options.maxBatch >= 1 && options.maxInFlight >= 1 && options.stallMs > 0))
      throw new Error('statement batcher: maxBatch and maxInFlight are at least 1, stallMs above 0');
    this.#options = options;
  }

  /** The item's outcome once its statement has run (see rerunAlone for a statement of several that failed). */
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
    let holding = true;
    const release = () => {
      if (!holding) return;
      holding = false;
      clearTimeout(stall);
      this.#inFlight--;
      this.#start();
    };
    const stall = setTimeout(release, this.#options.stallMs);
    try {
      const outcomes = await this.#runAll(batch);
      release();
      batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
    } catch (error) {
      release();
      if (batch.length === 1 || !this.#options.rerunAlone(error)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // One item's error (a duplicate key, say) failed the statement of all: each runs alone.
      await Promise.all(
        batch.map((waiting) =>
          this.#runAll([waiting]).then((outcomes) => waiting.resolve(outcomes[0]!), waiting.reject),
        ),
      );
    }
  }

  async #runAll(batch: readonly Waiting<I, O>[]): Promise<readonly O[]> {
    const outcomes = await this.#options.run(batch.map((waiting) => waiting.item));
    if (outcomes.length !== batch.length)
      throw new Error(`statement batcher: ${outcomes.length} outcomes for ${batch.length} items`);
    return outcomes;
  }
}
