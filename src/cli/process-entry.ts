// The `paygate` process: runCli over the process's own streams, its result the exit code.
import type { CliIo } from './cli-command.ts';
import { runCli } from './main.ts';

const io: CliIo = {
  env: process.env,
  stdin: process.stdin,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

process.exitCode = await runCli(process.argv.slice(2), io);
