// `paygate <command>`: picks the subcommand by its words, loads the configuration
// and maps failures to exit codes (2 for bad usage or configuration, 1 otherwise).
import { loadConfig } from '../config.ts';
import { runThroughGateway } from './admin-socket.ts';
import { exitCodeFor, type CliIo } from './cli-command.ts';
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
    const args = argv.slice(command.words.length);
    return (await runThroughGateway(command, args, io, config)) ?? (await command.run(args, io, config));
  } catch (error) {
    return exitCodeFor(error, command, io);
  }
}

const io: CliIo = {
  env: process.env,
  stdin: process.stdin,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

process.exitCode = await runCli(process.argv.slice(2), io);
