// The text of `paygate --help`, `paygate <group> --help` and `paygate <command> --help`,
// and the "did you mean" of an unknown command, all from the registry's entries.
import leven from 'leven';
import type { CliCommandEntry } from './cli-command.ts';

const HELP_OPTION = { flag: '-h, --help', description: 'show this help' };

/** Two columns: the left padded to its widest cell, the right wrapped by the terminal. */
function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

const name = (words: readonly string[]) => words.join(' ');

function optionRows(entry: CliCommandEntry): [string, string][] {
  const rows = entry.options.map((option): [string, string] => [
    option.value ? `${option.flag} ${option.value}` : option.flag,
    option.description,
  ]);
  return [...rows, [HELP_OPTION.flag, HELP_OPTION.description]];
}

export function commandHelp(entry: CliCommandEntry): string {
  const lines = [`Usage: ${entry.usage}`, '', entry.summary];
  if (entry.description) lines.push(entry.description);
  lines.push('', 'Options:', ...columns(optionRows(entry)));
  lines.push('', 'Examples:', ...entry.examples.map((example) => `  ${example}`));
  return lines.join('\n');
}

/** The commands under `prefix` (every command when empty), one line each. */
function commandList(entries: readonly CliCommandEntry[]): string[] {
  return columns(entries.map((entry) => [name(entry.words), entry.summary]));
}

export function overviewHelp(entries: readonly CliCommandEntry[]): string {
  return [
    'Usage: paygate <command> [options]',
    '',
    'Commands:',
    ...commandList(entries),
    '',
    'Run "paygate <command> --help" (or "paygate help <command>") for its options and examples.',
    'Shell completion: source <(paygate completion bash), or paygate completion zsh.',
  ].join('\n');
}

export function groupHelp(group: readonly string[], entries: readonly CliCommandEntry[]): string {
  const members = commandsIn(group, entries);
  return [
    `Usage: paygate ${name(group)} <command> [options]`,
    '',
    'Commands:',
    ...commandList(members),
    '',
    `Run "paygate ${name(group)} <command> --help" for its options and examples.`,
  ].join('\n');
}

function commandsIn(group: readonly string[], entries: readonly CliCommandEntry[]): CliCommandEntry[] {
  return entries.filter(
    (entry) => entry.words.length > group.length && group.every((word, index) => entry.words[index] === word),
  );
}

/** The command whose words begin `words`, the longest when several do. */
export function findCommand(
  words: readonly string[],
  entries: readonly CliCommandEntry[],
): CliCommandEntry | undefined {
  return entries
    .filter((entry) => entry.words.every((word, index) => words[index] === word))
    .sort((a, b) => b.words.length - a.words.length)[0];
}

/** The longest group (a word path above some command, e.g. ['crypto', 'sweeps']) that `words` begins with. */
export function findGroup(words: readonly string[], entries: readonly CliCommandEntry[]): string[] | undefined {
  for (let length = words.length; length > 0; length -= 1) {
    const group = words.slice(0, length);
    if (commandsIn(group, entries).length > 0) return group;
  }
  return undefined;
}

/**
 * The command or group nearest to what was typed, when one is close enough to be a
 * typo. Within a known group (`shop methds list`) only its members are candidates.
 */
export function suggestion(words: readonly string[], entries: readonly CliCommandEntry[]): string | undefined {
  const group = findGroup(words, entries) ?? [];
  const candidates = new Set<string>();
  for (const entry of commandsIn(group, entries)) {
    for (let length = group.length + 1; length <= entry.words.length; length += 1)
      candidates.add(name(entry.words.slice(0, length)));
  }
  let best: { candidate: string; distance: number; length: number } | undefined;
  for (const candidate of candidates) {
    // Compared with as many typed words as the candidate has: arguments after a command do not count.
    const length = candidate.split(' ').length;
    const distance = leven(name(words.slice(0, length)), candidate);
    if (best === undefined || distance < best.distance || (distance === best.distance && length > best.length))
      best = { candidate, distance, length };
  }
  if (best === undefined) return undefined;
  return best.distance <= Math.max(2, Math.floor(best.candidate.length / 4)) ? best.candidate : undefined;
}
