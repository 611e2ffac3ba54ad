// `paygate <command>`: picks the subcommand by its words, answers help without
// loading anything else, then loads the command's code and the configuration and
// maps failures to exit codes (2 for bad usage or configuration, 1 otherwise).
// No side effect on import: the process entry is ./process-entry.ts, and tests
// call runCli in-process with their own CliIo.
import { loadConfig, type Config } from '../config.ts';
import { runThroughGateway } from './admin-socket.ts';
import { exitCodeFor, type CliCommandEntry, type CliIo } from './cli-command.ts';
import { commands } from './commands.ts';
import { commandHelp, findCommand, findGroup, groupHelp, overviewHelp, suggestion } from './help.ts';

const HELP_FLAGS = new Set(['--help', '-h']);

/** `--help`/`-h` among a command's arguments (before a `--` that ends its options). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => HELP_FLAGS.has(arg));
}

/** Help for whatever `words` name (every command, a group, or one command); exit 0, or 2 when they name nothing. */
function printHelp(words: readonly string[], io: CliIo): number {
  const named = words.filter((word) => !word.startsWith('-'));
  if (named.length === 0) {
    io.out(overviewHelp(commands));
    return 0;
  }
  const command = findCommand(named, commands);
  if (command && command.words.length === named.length) io.out(commandHelp(command));
  else if (!command && findGroup(named, commands)?.length === named.length) io.out(groupHelp(named, commands));
  else return unknownCommand(named, io);
  return 0;
}

function unknownCommand(words: readonly string[], io: CliIo): number {
  const nearest = suggestion(words, commands);
  const group = findGroup(words, commands);
  const hint = nearest ? `\nDid you mean "paygate ${nearest}"?` : '';
  const list = group ? groupHelp(group, commands) : 'Run "paygate --help" for the commands.';
  io.err(`paygate: unknown command "${words.join(' ')}"${hint}\n\n${list}`);
  return 2;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  if (argv.length === 0) {
    io.out(overviewHelp(commands));
    return 2;
  }
  if (argv[0] === 'help' || HELP_FLAGS.has(argv[0]!)) return printHelp(argv.slice(1), io);
  const entry = findCommand(argv, commands);
  if (!entry) {
    // A group alone (`paygate crypto sweeps`), with --help or without: its commands.
    const group = findGroup(argv, commands);
    if (group && group.length === argv.filter((arg) => !HELP_FLAGS.has(arg)).length) {
      if (asksForHelp(argv)) return printHelp(group, io);
      io.err(groupHelp(group, commands));
      return 2;
    }
    // The words typed before the first option name the command; option values do not.
    const firstOption = argv.findIndex((arg) => arg.startsWith('-'));
    return unknownCommand(firstOption === -1 ? argv : argv.slice(0, Math.max(firstOption, 1)), io);
  }
  const args = argv.slice(entry.words.length);
  if (asksForHelp(args)) {
    io.out(commandHelp(entry));
    return 0;
  }
  return runCommand(entry, args, io);
}

async function runCommand(entry: CliCommandEntry, args: string[], io: CliIo): Promise<number> {
  let config: Config | undefined;
  try {
    config = loadConfig(io.env);
    return (await runThroughGateway(entry, args, io, config)) ?? (await (await entry.load()).run(args, io, config));
  } catch (error) {
    return exitCodeFor(error, entry, io, config);
  }
}
