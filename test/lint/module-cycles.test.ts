// Import cycles between modules (folders of src/, of src/crypto/ for the crypto
// modules; src/db and the files of src/ itself are infrastructure and wiring, left
// out). Reads the relative imports of every source file and finds the strongly
// connected groups of the module graph: a group of more than one module is a cycle.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');
const IMPORT = /(?:from|import)\s*\(?\s*'(\.[^']+)'/g;

function moduleOf(file: string): string | undefined {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts.length < 2 || parts[0] === 'db') return undefined;
  return parts[0] === 'crypto' && parts.length > 2 ? `crypto/${parts[1]}` : parts[0];
}

async function moduleGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const entry of await readdir(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const from = moduleOf(file);
    if (from === undefined) continue;
    for (const match of (await readFile(file, 'utf8')).matchAll(IMPORT)) {
      const to = moduleOf(path.resolve(path.dirname(file), match[1]!));
      if (to !== undefined && to !== from) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one module, each sorted. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) visit(next);
      if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, low.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = member === node ? undefined : stack.pop())
      group.push(member);
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

describe('module import cycles', () => {
  it('no module imports, through others, a module that imports it', async () => {
    // http imports no module (the wiring hands it the merchants' authenticator), and the sending worker is
    // handed custody's signing pause: what a module needs of one that needs it comes through the wiring.
    expect(cycles(await moduleGraph())).toEqual([]);
  });
});
