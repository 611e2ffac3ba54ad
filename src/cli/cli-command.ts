// The shape of a `paygate` subcommand. Commands parse their own flags with
// node:util parseArgs and throw CliUsageError for bad arguments (exit code 2).
import type { Config } from '../config.ts';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The process's standard input, for a secret that must not appear in argv (`paygate crypto keys import`). */
  readonly stdin?: AsyncIterable<Buffer | string> & { readonly isTTY?: boolean };
  out(line: string): void;
  err(line: string): void;
}

export interface CliCommand {
  /** Words that select the command, e.g. ['merchant', 'create']. */
  readonly words: readonly string[];
  readonly usage: string;
  readonly summary: string;
  /** Returns the process exit code. */
  run(args: string[], io: CliIo, config: Config): Promise<number>;
}

export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}
