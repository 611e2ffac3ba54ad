// `paygate <command>`: picks the subcommand by its words, loads the configuration
// and maps failures to exit codes (2 for bad usage or configuration, 1 otherwise).
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { CliUsageError, type CliIo } from './cli-command.ts';
import { commands } from './commands.ts';
import { describeDatabaseFailure, describeFilesystemFailure, describeListenFailure } from './start-errors.ts';

function helpText(): string {
  const lines = commands.map((command) => `  ${command.usage}\n      ${command.summary}`);
  return `Usage: paygate <command> [options]\n\nCommands:\n${lines.join('\n')}\n`;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
    io.out(helpText());
    return argv.length === 0 ? 2 : 0;
  }
  const command = commands
    .filter((candidate) => candidate.words.every((word, index) => argv[index] === word))
    .sort((a, b) => b.words.length - a.words.length)[0];
  if (!command) {
    io.err(`paygate: unknown command "${argv.join(' ')}"\n\n${helpText()}`);
    return 2;
  }
  let config: Config | undefined;
  try {
    config = loadConfig(io.env);
    return await command.run(argv.slice(command.words.length), io, config);
  } catch (error) {
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
    const failure = (config && (describeListenFailure(error, config) ?? describeDatabaseFailure(error, config))) ?? describeFilesystemFailure(error);
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
}

const io: CliIo = {
  env: process.env,
  stdin: process.stdin,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

process.exitCode = await runCli(process.argv.slice(2), io);
