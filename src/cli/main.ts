// `paygate <command>`: picks the subcommand by its words, loads the configuration
// and maps failures to exit codes (2 for bad usage or configuration, 1 otherwise).
// No side effect on import: the process entry is ./process-entry.ts, and tests
// call runCli in-process with their own CliIo.
import { ConfigError, loadConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { CliUsageError, type CliIo } from './cli-command.ts';
import { commands } from './commands.ts';

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
  try {
    const config = loadConfig(io.env);
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
    io.err(`paygate: ${(error as Error).stack ?? String(error)}`);
    return 1;
  }
}
