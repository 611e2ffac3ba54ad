// The README's walkthroughs as a program. A shell block marked
// `<!-- runnable: name … -->` belongs to the named walkthroughs; a walkthrough's
// blocks run in order in one bash, so variables carry from block to block. A
// block is cut into steps at its printed answers (`# → [status] {json}`, the JSON
// continued on `#` lines): each step's output is that answer, and must have the
// same shape (keys and value types) as the printed one.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface PrintedAnswer {
  readonly status: number | undefined;
  /** Parsed with each bare `…` member turned into the key "…" (more fields than shown). */
  readonly body: unknown;
  readonly text: string;
}

interface Step {
  readonly script: string;
  readonly answer: PrintedAnswer | undefined;
  /** Where in README.md, for messages. */
  readonly line: number;
}

export interface Walkthrough {
  readonly name: string;
  readonly steps: readonly Step[];
}

const MARKER = /^<!--\s*runnable:\s*([\w\s-]+?)\s*-->\s*$/;
const ANSWER = /^#\s*→\s*(?:(\d{3})\s+)?(\{.*)$/;
/** A bare `…` standing for more members, e.g. `{…,"status":"paid",…}`. */
const ELIDED = '…';

/** Index just past the JSON value starting at `text[0]`, or -1 while it is still open. */
function jsonEnd(text: string): number {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth += 1;
    else if (char === '}' || char === ']') {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/** Bare `…` outside strings become `"…":"…"` members (objects) or `"…"` items (arrays). */
function withElisionsAsMembers(json: string): string {
  let out = '';
  let inString = false;
  const open: string[] = [];
  for (let index = 0; index < json.length; index += 1) {
    const char = json[index]!;
    if (inString) {
      out += char;
      if (char === '\\') out += json[++index] ?? '';
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    if (char === '{' || char === '[') open.push(char);
    if (char === '}' || char === ']') open.pop();
    out += char === ELIDED ? (open.at(-1) === '[' ? `"${ELIDED}"` : `"${ELIDED}":"${ELIDED}"`) : char;
  }
  return out;
}

function parseAnswer(text: string, status: string | undefined, line: number): PrintedAnswer {
  const end = jsonEnd(text);
  const json = text.slice(0, end);
  try {
    return {
      status: status === undefined ? undefined : Number(status),
      body: JSON.parse(withElisionsAsMembers(json)),
      text: json,
    };
  } catch (error) {
    throw new Error(`README.md:${line}: the printed answer is not JSON (${(error as Error).message}): ${json}`);
  }
}

/** Cuts one shell block into steps at its printed answers. */
function stepsOf(lines: readonly string[], firstLine: number): Step[] {
  const steps: Step[] = [];
  let script: string[] = [];
  let scriptLine = firstLine;
  for (let index = 0; index < lines.length; index += 1) {
    const match = ANSWER.exec(lines[index]!);
    if (!match) {
      if (script.length === 0) scriptLine = firstLine + index;
      script.push(lines[index]!);
      continue;
    }
    const answerLine = firstLine + index;
    let text = match[2]!;
    // The JSON goes on over comment lines until it closes.
    while (jsonEnd(text) === -1 && index + 1 < lines.length && /^#\s/.test(lines[index + 1]!)) {
      index += 1;
      text += lines[index]!.replace(/^#\s*/, '');
    }
    if (jsonEnd(text) === -1) throw new Error(`README.md:${answerLine}: the printed answer never closes: ${text}`);
    if (script.every((scriptText) => scriptText.trim() === '' || scriptText.trim().startsWith('#'))) {
      throw new Error(`README.md:${answerLine}: a printed answer with no command before it`);
    }
    steps.push({ script: script.join('\n'), answer: parseAnswer(text, match[1], answerLine), line: scriptLine });
    script = [];
  }
  if (script.some((text) => text.trim() !== '' && !text.trim().startsWith('#')))
    steps.push({ script: script.join('\n'), answer: undefined, line: scriptLine });
  return steps;
}

/** The walkthroughs of a README text, by name, in the order their blocks appear. */
export function parseWalkthroughs(readme: string): Map<string, Walkthrough> {
  const lines = readme.split('\n');
  const walkthroughs = new Map<string, Step[]>();
  for (let index = 0; index < lines.length; index += 1) {
    const marker = MARKER.exec(lines[index]!);
    if (!marker) continue;
    const fence = lines[index + 1];
    if (fence !== '```sh')
      throw new Error(
        `README.md:${index + 2}: a runnable marker must be followed by a \`\`\`sh block, found: ${fence}`,
      );
    const close = lines.indexOf('```', index + 2);
    if (close === -1) throw new Error(`README.md:${index + 2}: the runnable block never closes`);
    const steps = stepsOf(lines.slice(index + 2, close), index + 3);
    for (const name of marker[1]!.split(/\s+/)) walkthroughs.set(name, [...(walkthroughs.get(name) ?? []), ...steps]);
    index = close;
  }
  return new Map([...walkthroughs].map(([name, steps]) => [name, { name, steps }]));
}

export async function readReadme(): Promise<string> {
  return readFile(new URL('../../README.md', import.meta.url), 'utf8');
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Where `actual` differs in shape from the printed `expected`: a printed key
 * missing, an extra key (unless the printed object has a `…`), another type, or
 * an array of another length (unless it ends with `…`). Values are not compared.
 */
export function shapeDifferences(expected: unknown, actual: unknown, path = '$'): string[] {
  const expectedType = typeName(expected);
  if (expectedType !== typeName(actual))
    return [`${path}: printed ${expectedType}, got ${typeName(actual)} (${JSON.stringify(actual)})`];
  if (Array.isArray(expected)) {
    const got = actual as unknown[];
    const open = expected.at(-1) === ELIDED;
    const items = open ? expected.slice(0, -1) : expected;
    const problems =
      !open && items.length !== got.length ? [`${path}: printed ${items.length} items, got ${got.length}`] : [];
    return [
      ...problems,
      ...items.flatMap((item, index) =>
        index < got.length ? shapeDifferences(item, got[index], `${path}[${index}]`) : [`${path}[${index}]: missing`],
      ),
    ];
  }
  if (expectedType !== 'object') return [];
  const printed = expected as Record<string, unknown>;
  const got = actual as Record<string, unknown>;
  const problems = Object.keys(printed)
    .filter((key) => key !== ELIDED)
    .flatMap((key) =>
      key in got
        ? shapeDifferences(printed[key], got[key], `${path}.${key}`)
        : [`${path}.${key}: printed, but not in the answer`],
    );
  if (!(ELIDED in printed)) {
    for (const key of Object.keys(got))
      if (!(key in printed)) problems.push(`${path}.${key}: in the answer, but not printed`);
  }
  return problems;
}

export interface StepOutcome {
  readonly exitCode: number;
  readonly stdout: string;
  /** Status of the step's last HTTP answer (curl's headers), if any. */
  readonly status: number | undefined;
}

/**
 * One bash for one walkthrough. `curl` is wrapped only to keep the response
 * headers (`-D`, which changes nothing it prints), so a step's status is known.
 */
export class WalkthroughShell {
  readonly #bash: ChildProcessWithoutNullStreams;
  readonly #token = `__paygate_step_${randomBytes(8).toString('hex')}__`;
  readonly #headers: string;
  #stdout = '';
  #stderr = '';
  #exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #wake: (() => void) | undefined;

  constructor(cwd: string) {
    this.#headers = join(cwd, '.walkthrough-headers');
    this.#bash = spawn('bash', ['--noprofile', '--norc'], {
      cwd,
      env: { PATH: process.env.PATH, HOME: cwd, LANG: 'C.UTF-8' },
    });
    this.#bash.stdout.on('data', (chunk: Buffer) => {
      this.#stdout += chunk.toString();
      this.#wake?.();
    });
    this.#bash.stderr.on('data', (chunk: Buffer) => (this.#stderr += chunk.toString()));
    this.#bash.on('exit', (code, signal) => {
      this.#exited = { code, signal };
      this.#wake?.();
    });
    // set -u: a variable some removed step should have set fails loudly instead of expanding to nothing.
    this.#bash.stdin.write(`set -u\ncurl() { rm -f '${this.#headers}'; command curl -D '${this.#headers}' "$@"; }\n`);
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Runs a step; resolves when bash has run it (or has exited: then the outcome says so). */
  async run(script: string): Promise<StepOutcome> {
    this.#stdout = '';
    this.#bash.stdin.write(`rm -f '${this.#headers}'\n{\n${script}\n}\nprintf '\\n${this.#token} %d\\n' "$?"\n`);
    const done = new RegExp(`\\n${this.#token} (\\d+)\\n`);
    for (;;) {
      const match = done.exec(this.#stdout);
      if (match) {
        return {
          exitCode: Number(match[1]),
          stdout: this.#stdout.slice(0, match.index),
          status: await this.#lastStatus(),
        };
      }
      if (this.#exited) {
        return { exitCode: this.#exited.code ?? 128, stdout: this.#stdout, status: undefined };
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  async #lastStatus(): Promise<number | undefined> {
    const headers = await readFile(this.#headers, 'utf8').catch(() => '');
    const statuses = [...headers.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((match) => Number(match[1]));
    return statuses.at(-1);
  }

  close(): void {
    if (!this.#exited) this.#bash.stdin.end();
  }
}
