// docs/ARCHITECTURE.md's module graph is generated from the imports of src/: when the code's
// dependencies change, the document must be regenerated with the same commit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  architecturePath,
  buildGraph,
  expectedArchitectureDocument,
  importsOf,
  moduleOf,
} from '../../scripts/architecture-graph.ts';

describe('docs/ARCHITECTURE.md module graph', () => {
  it('is what `npm run docs:architecture` generates from the imports of src/', () => {
    const current = readFileSync(architecturePath, 'utf8');
    const matches = current === expectedArchitectureDocument();
    expect(
      matches,
      'docs/ARCHITECTURE.md differs from the code: run `npm run docs:architecture` and commit the result',
    ).toBe(true);
  });
});

describe('the module graph reader', () => {
  it('reads value, type-only, re-exported and dynamic imports, and ignores packages', () => {
    const source = [
      "import { a } from './a.ts';",
      "import type { B } from '../b/b.ts';",
      "import { type C } from './c.ts';",
      "export { d } from './d.ts';",
      "import ts from 'typescript';",
      "const e = await import('./e.ts');",
      "type F = import('./f.ts').F;",
    ].join('\n');
    expect(importsOf(source, 'x.ts')).toEqual([
      { specifier: './a.ts', typeOnly: false },
      { specifier: '../b/b.ts', typeOnly: true },
      { specifier: './c.ts', typeOnly: true },
      { specifier: './d.ts', typeOnly: false },
      { specifier: './e.ts', typeOnly: false },
      { specifier: './f.ts', typeOnly: true },
    ]);
  });

  it('makes modules of top-level folders and of crypto subfolders; wiring and platform files are their own nodes', () => {
    expect(moduleOf('payments/page/payment-page-routes.ts')).toBe('payments');
    expect(moduleOf('crypto/sending/executor.ts')).toBe('crypto/sending');
    expect(moduleOf('cli/main.ts')).toBe('cli');
    expect(moduleOf('db/schema.ts')).toBe('db/schema.ts');
    expect(moduleOf('db/transaction.ts')).toBe('db');
    expect(moduleOf('errors.ts')).toBe('errors.ts');
  });

  it('finds a cycle through a type-only import, and none through wiring', () => {
    const graph = buildGraph([
      { fromFile: 'http/authentication.ts', toFile: 'merchants/merchant-service.ts', typeOnly: false },
      { fromFile: 'merchants/account-routes.ts', toFile: 'http/authentication.ts', typeOnly: true },
      { fromFile: 'ledger/ledger-service.ts', toFile: 'db/schema.ts', typeOnly: true },
      { fromFile: 'db/schema.ts', toFile: 'ledger/ledger-tables.ts', typeOnly: true },
    ]);
    expect(graph.cycles).toEqual([['http', 'merchants']]);
  });
});
