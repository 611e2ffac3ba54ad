// The shape of a `paygate` subcommand. Commands parse their own flags with
// node:util parseArgs and throw CliUsageError for bad arguments (exit code 2).
import { ConfigError, type Config } from '../config.ts';
import { AppError } from '../errors.ts';

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
  /**
   * Runs in the invoking process even while a gateway runs on the embedded database's folder
   * (it opens no database, or must not run beside a gateway); otherwise the command runs
   * inside that gateway (cli/admin-socket.ts).
   */
  readonly runsLocally?: boolean;
  /** Returns the process exit code. */
  run(args: string[], io: CliIo, config: Config): Promise<number>;
}

export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/** Reports a command's failure and returns its exit code: 2 for bad usage or configuration, 1 otherwise. */
export function exitCodeFor(error: unknown, command: CliCommand, io: Pick<CliIo, 'err'>): number {
  if (error instanceof CliUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    io.err(`paygate: ${(error as Error).message}\nUsage: ${command.usage}`);
    return 2;
  }
  if (error instanceof ConfigError) {
    io.err(`paygate: ${error.message}`);
    return 2;
  }
  if (error instanceof AppError) {
    io.err(`paygate: ${error.message}`);
    return 1;
  }
  io.err(`paygate: ${(error as Error).stack ?? String(error)}`);
  return 1;
}
