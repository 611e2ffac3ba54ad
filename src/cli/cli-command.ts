// The shape of a `paygate` subcommand. The registry (commands.ts) holds what help
// and completion need — words, usage, options, examples — and imports a command's
// code only when it runs, so `--help` and completion load nothing heavy. Commands
// parse their own flags with node:util parseArgs and throw CliUsageError for bad
// arguments (exit code 2).
import { userInfo } from 'node:os';
import { ConfigError, type Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { describeDatabaseFailure, describeFilesystemFailure, describeListenFailure } from './start-errors.ts';

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The process's standard input, for a secret that must not appear in argv (`paygate crypto keys import`). */
  readonly stdin?: AsyncIterable<Buffer | string> & { readonly isTTY?: boolean };
  out(line: string): void;
  err(line: string): void;
}

/** What a command does once chosen. */
export interface CliCommand {
  /** Returns the process exit code. */
  run(args: string[], io: CliIo, config: Config): Promise<number>;
}

export interface CliOption {
  /** As typed: '--shop'. */
  readonly flag: string;
  /** The value's placeholder ('SHOP_ID'); absent for a switch. */
  readonly value?: string;
  readonly description: string;
  /** The values it accepts, when they are a fixed few (completed by the shell). */
  readonly choices?: readonly string[];
}

/** A registry entry: everything `paygate <words> --help` prints, and how to load the command. */
export interface CliCommandEntry {
  /** Words that select the command, e.g. ['merchant', 'create']. */
  readonly words: readonly string[];
  readonly usage: string;
  /** One line, in the command list. */
  readonly summary: string;
  /** More about what it does, in its own help; optional. */
  readonly description?: string;
  readonly options: readonly CliOption[];
  /** 1 to 3 command lines, each optionally followed by "  # what it does". */
  readonly examples: readonly string[];
  /** Fixed choices of its positional argument, for completion (e.g. completion's shells). */
  readonly arguments?: readonly string[];
  /** A listing: prints an aligned table, or with --json a JSON array (the shapes in docs/cli.md). */
  readonly lists?: true;
  /**
   * Runs in the invoking process even while a gateway runs on the embedded database's folder
   * (it opens no database, or must not run beside a gateway); otherwise the command runs
   * inside that gateway (cli/admin-socket.ts).
   */
  readonly runsLocally?: true;
  load(): Promise<CliCommand>;
}

/** Who runs a command, as withdrawals and the audit log record them: `--by`, else `cli:<os user>`. */
export function operatorName(by?: string): string {
  if (by !== undefined) return by;
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

/**
 * Reports a command's failure as one line naming what to fix (the stack only with
 * LOG_LEVEL=debug) and returns its exit code: 2 for bad usage or configuration, 1 otherwise.
 */
export function exitCodeFor(
  error: unknown,
  entry: Pick<CliCommandEntry, 'usage' | 'words'>,
  io: Pick<CliIo, 'err' | 'env'>,
  config?: Config,
): number {
  if (error instanceof CliUsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    io.err(
      `paygate: ${(error as Error).message}\nUsage: ${entry.usage}\nRun "paygate ${entry.words.join(' ')} --help" for its options.`,
    );
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
  const failure =
    (config && (describeListenFailure(error, config) ?? describeDatabaseFailure(error, config))) ??
    describeFilesystemFailure(error);
  const debug = io.env.LOG_LEVEL === 'debug' || io.env.LOG_LEVEL === 'trace';
  const stack = debug && error instanceof Error && error.stack ? `\n${error.stack}` : '';
  if (failure) {
    io.err(`paygate: ${failure.message}${stack}`);
    return failure.exitCode;
  }
  const firstLine = error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error);
  io.err(`paygate: ${firstLine}${stack || '\n(LOG_LEVEL=debug shows where it happened)'}`);
  return 1;
}
