// `paygate completion bash|zsh`: a shell script completing command words, each
// command's options and the values of options with a fixed few, generated from the
// registry so it never drifts. Both shells share three lookup functions (plain
// `case` statements): the words after a path, the options of a command, the choices
// of an option. The walk over the typed words is each shell's own.
import { parseArgs } from 'node:util';
import type { CliCommand, CliCommandEntry } from './cli-command.ts';
import { CliUsageError } from './cli-command.ts';
import { commands } from './commands.ts';

const SHELLS = ['bash', 'zsh'] as const;
type Shell = (typeof SHELLS)[number];

/** Every word goes into the script unquoted inside single quotes: only plain tokens are allowed. */
function token(word: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(word)) throw new Error(`completion: "${word}" is not a plain word`);
  return word;
}

function caseArm(key: string, values: readonly string[]): string {
  return `    '${key}') echo '${values.map(token).join(' ')}' ;;`;
}

/** The words that may follow each path ('' is the start), options per command, choices per option. */
function lookupFunctions(entries: readonly CliCommandEntry[]): string {
  const next = new Map<string, string[]>([['', ['help']]]);
  for (const entry of entries) {
    entry.words.forEach((word, index) => {
      const path = entry.words.slice(0, index).join(' ');
      const words = next.get(path) ?? [];
      if (!words.includes(word)) words.push(word);
      next.set(path, words);
    });
    if (entry.arguments) next.set(entry.words.join(' '), [...entry.arguments]);
  }
  const options = entries.map((entry) =>
    caseArm(entry.words.join(' '), [...entry.options.map((option) => option.flag), '--help']),
  );
  const choices = entries.flatMap((entry) =>
    entry.options
      .filter((option) => option.choices)
      .map((option) => caseArm(`${entry.words.join(' ')}|${option.flag}`, option.choices!)),
  );
  return [
    '_paygate_words() {',
    '  case "$1" in',
    ...[...next].map(([path, words]) => caseArm(path, words)),
    '  esac',
    '}',
    '_paygate_options() {',
    '  case "$1" in',
    ...options,
    "    *) echo '--help' ;;",
    '  esac',
    '}',
    '_paygate_choices() {',
    '  case "$1|$2" in',
    ...choices,
    '  esac',
    '}',
  ].join('\n');
}

/** Walks the typed words before the cursor into the command path (`shop methods list`); `help` in front is skipped. */
const WALK = `  local path_='' word i next lost=''
  for ((i = FIRST; i < LAST; i++)); do
    word="\${WORDS[i]}"
    [[ $word == -* ]] && continue
    [[ $word == help && -z $path_ ]] && continue
    next="$(_paygate_words "$path_")"
    if [[ " $next " != *" $word "* ]]; then
      # Past a whole command this is its argument; within a group, a word paygate does not know.
      [[ -n $next ]] && lost=1
      break
    fi
    path_="\${path_:+$path_ }$word"
  done
  local choices
  choices="$(_paygate_choices "$path_" "$prev")"
  next="$(_paygate_words "$path_")"
  if [[ -n $lost ]]; then candidates=''
  elif [[ -n $choices ]]; then candidates="$choices"
  elif [[ $cur == -* || -z $next ]]; then candidates="$(_paygate_options "$path_")"
  else candidates="$next"
  fi`;

function bashScript(entries: readonly CliCommandEntry[]): string {
  return `# paygate completion for bash: source <(paygate completion bash)
${lookupFunctions(entries)}
_paygate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" candidates
${WALK.replace('FIRST', '1').replace('LAST', 'COMP_CWORD').replace('WORDS', 'COMP_WORDS')}
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -F _paygate paygate
`;
}

function zshScript(entries: readonly CliCommandEntry[]): string {
  return `#compdef paygate
# paygate completion for zsh: paygate completion zsh > "\${fpath[1]}/_paygate", or source <(paygate completion zsh)
${lookupFunctions(entries)}
_paygate() {
  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" candidates
${WALK.replace('FIRST', '2').replace('LAST', 'CURRENT').replace('WORDS', 'words')}
  compadd -- \${=candidates}
}
if [[ "\${funcstack[1]}" == _paygate ]]; then _paygate "$@"; else compdef _paygate paygate; fi
`;
}

export function completionScript(shell: Shell, entries: readonly CliCommandEntry[] = commands): string {
  return shell === 'bash' ? bashScript(entries) : zshScript(entries);
}

export const completionCommand: CliCommand = {
  async run(args, io) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
    const shell = positionals[0] as Shell;
    if (positionals.length !== 1 || !SHELLS.includes(shell))
      throw new CliUsageError(`name one shell: ${SHELLS.join(' or ')}`);
    io.out(completionScript(shell).trimEnd());
    return 0;
  },
};
