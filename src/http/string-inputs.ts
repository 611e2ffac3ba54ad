// One check, before any route's validation, over every string a request
// carries: path parameters, query, body (keys and values, at any depth) and
// headers. PostgreSQL cannot store U+0000 in text (it answered 500), and UTF-8
// cannot carry an unpaired UTF-16 surrogate (the driver stored U+FFFD while the
// response echoed the original). Both are refused with 400 invalid_request
// naming the field, so no route, present or future, can forget it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../errors.ts';

/** The request parts, named as schema-validation messages name them. */
const PARTS = ['params', 'querystring', 'body', 'headers'] as const;
type Part = (typeof PARTS)[number];

function partOf(request: FastifyRequest, part: Part): unknown {
  return part === 'querystring' ? request.query : request[part];
}

/** Why `text` cannot be stored as it is, or undefined when it can. */
function unstorableTextProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000), which is not allowed';
  if (!text.isWellFormed()) return 'contains an unpaired UTF-16 surrogate, which is not valid Unicode text';
  return undefined;
}

/** A field name fit for the message even when the name itself is the bad part. */
function printable(path: readonly string[]): string {
  return path.map((segment) => segment.replaceAll('\u0000', '\\u0000').toWellFormed()).join('.');
}

interface Visit {
  readonly value: unknown;
  readonly name: string | undefined;
  readonly parent: Visit | undefined;
}

function pathOf(visit: Visit): string[] {
  const path: string[] = [];
  for (let node: Visit | undefined = visit; node?.name !== undefined; node = node.parent) path.push(node.name);
  return path.reverse();
}

/** The first string in `value` that cannot be stored, with its path; undefined when all can. */
function findUnstorableText(value: unknown): { path: string[]; problem: string } | undefined {
  // Iterative, with parent links instead of copied paths: a 64 KiB JSON body
  // can nest tens of thousands of levels deep.
  const pending: Visit[] = [{ value, name: undefined, parent: undefined }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    const current = visit.value;
    if (typeof current === 'string') {
      const problem = unstorableTextProblem(current);
      if (problem) return { path: pathOf(visit), problem };
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, name: String(index), parent: visit }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const entry = { value: item, name: key, parent: visit };
        const problem = unstorableTextProblem(key);
        if (problem) return { path: pathOf(entry), problem: `has a name that ${problem}` };
        pending.push(entry);
      }
    }
  }
  return undefined;
}

export function installStringInputCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const part of PARTS) {
      const found = findUnstorableText(partOf(request, part));
      if (found) throw new InvalidRequestError(`${part} field "${printable(found.path) || '(root)'}" ${found.problem}`);
    }
  });
}
