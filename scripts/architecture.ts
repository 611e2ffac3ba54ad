// `npm run docs:architecture`: rewrites the generated module graph of docs/ARCHITECTURE.md
// (between its markers) from the imports of src/ (scripts/architecture-graph.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { architecturePath, expectedArchitectureDocument } from './architecture-graph.ts';

const expected = expectedArchitectureDocument();
if (readFileSync(architecturePath, 'utf8') === expected) {
  process.stdout.write('docs/ARCHITECTURE.md: module graph up to date\n');
} else {
  writeFileSync(architecturePath, expected);
  process.stdout.write('docs/ARCHITECTURE.md: module graph rewritten\n');
}
