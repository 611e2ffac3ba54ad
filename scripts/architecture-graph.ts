// The module dependency graph of src/, read from the real imports with TypeScript's own
// parser, and its rendering for docs/ARCHITECTURE.md (`npm run docs:architecture` writes it,
// test/docs/architecture.test.ts fails when the document and the code differ).
//
// A module is a top-level folder of src/ (for src/crypto, each subfolder). Each other top-level
// file of src/ (clock.ts, config.ts, context.ts, errors.ts, …) is a node of its own: grouping
// them would invent cycles (config.ts reads db/, db/ throws errors.ts). The files that assemble
// the gateway (WIRING) import every module by design: their edges are listed but kept out of the
// diagram and of the cycle search. db/schema.ts is wiring too: it joins every module's table
// types for Kysely. Type-only imports count (a module that names another's types depends on
// their shape); they are marked, since they create no load-order dependency.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Top-level files and folders of src/ that assemble modules rather than being one. */
export const WIRING: readonly string[] = ['app.ts', 'runtime.ts', 'modules.ts', 'cli', 'db/schema.ts'];

/** Folders whose subfolders are modules of their own. */
const SPLIT_FOLDERS: readonly string[] = ['crypto'];

export interface ImportEdge {
  readonly fromFile: string;
  readonly toFile: string;
  readonly typeOnly: boolean;
}

export interface ModuleEdge {
  readonly from: string;
  readonly to: string;
  /** True when every import behind the edge is `import type` (or an `import('…')` type). */
  readonly typeOnly: boolean;
  readonly imports: readonly ImportEdge[];
}

export interface ModuleGraph {
  readonly modules: readonly string[];
  readonly edges: readonly ModuleEdge[];
  /** Strongly connected groups of two or more modules, wiring left out. */
  readonly cycles: readonly (readonly string[])[];
}

/** The module a file (path relative to src/, with forward slashes) belongs to. */
export function moduleOf(file: string): string {
  const parts = file.split('/');
  const [first, second] = parts;
  if (first === undefined) throw new Error(`empty path`);
  if (WIRING.includes(file)) return file;
  if (parts.length === 1 || WIRING.includes(first)) return first;
  if (SPLIT_FOLDERS.includes(first) && parts.length > 2 && second !== undefined) return `${first}/${second}`;
  return first;
}

export function isWiring(module: string): boolean {
  return WIRING.includes(module);
}

/** A top-level file of src/ that is not wiring: the shared platform (clock, config, errors, …). */
function isPlatformFile(module: string): boolean {
  return module.endsWith('.ts') && !module.includes('/') && !isWiring(module);
}

function listTypeScriptFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) files.push(...listTypeScriptFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false; // `import './x.ts'` runs the file
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  if (clause.name !== undefined || bindings === undefined || !ts.isNamedImports(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

/** Relative module specifiers a file imports or re-exports, statically or through import(). */
export function importsOf(source: string, fileName: string): { specifier: string; typeOnly: boolean }[] {
  const sourceFile = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: isTypeOnlyImport(node) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument))
        found.push({ specifier: argument.text, typeOnly: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found.filter((entry) => entry.specifier.startsWith('.'));
}

/** Every relative import between files of src/, paths relative to src/. */
export function readImports(srcFolder: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const path of listTypeScriptFiles(srcFolder)) {
    const fromFile = relative(srcFolder, path).split(sep).join('/');
    for (const { specifier, typeOnly } of importsOf(readFileSync(path, 'utf8'), path)) {
      const toFile = posix.normalize(posix.join(posix.dirname(fromFile), specifier));
      if (toFile.startsWith('..')) continue; // outside src/
      edges.push({ fromFile, toFile, typeOnly });
    }
  }
  return edges;
}

export function buildGraph(imports: readonly ImportEdge[]): ModuleGraph {
  const byEdge = new Map<string, ImportEdge[]>();
  const modules = new Set<string>();
  for (const edge of imports) {
    const from = moduleOf(edge.fromFile);
    const to = moduleOf(edge.toFile);
    modules.add(from).add(to);
    if (from === to) continue;
    const key = `${from}\u0000${to}`;
    const known = byEdge.get(key) ?? [];
    const same = known.find((other) => other.fromFile === edge.fromFile && other.toFile === edge.toFile);
    if (same === undefined) byEdge.set(key, [...known, edge]);
    else if (same.typeOnly && !edge.typeOnly) byEdge.set(key, [...known.filter((other) => other !== same), edge]);
  }
  const edges = [...byEdge.entries()]
    .map(([key, list]): ModuleEdge => {
      const [from = '', to = ''] = key.split('\u0000');
      const sorted = [...list].sort((a, b) => compareText(`${a.fromFile} ${a.toFile}`, `${b.fromFile} ${b.toFile}`));
      return { from, to, typeOnly: list.every((edge) => edge.typeOnly), imports: sorted };
    })
    .sort((a, b) => compareText(`${a.from} ${a.to}`, `${b.from} ${b.to}`));
  const sortedModules = [...modules].sort(compareText);
  return {
    modules: sortedModules,
    edges,
    cycles: findCycles(
      sortedModules.filter((m) => !isWiring(m)),
      edges,
    ),
  };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Tarjan's strongly connected components; each group of two or more modules is a cycle. */
function findCycles(modules: readonly string[], edges: readonly ModuleEdge[]): string[][] {
  const next = new Map<string, string[]>(modules.map((m) => [m, []]));
  for (const edge of edges) next.get(edge.from)?.push(edge.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (module: string): void => {
    index.set(module, index.size);
    low.set(module, index.get(module) ?? 0);
    stack.push(module);
    onStack.add(module);
    for (const target of next.get(module) ?? []) {
      if (!next.has(target)) continue; // wiring
      if (!index.has(target)) {
        connect(target);
        low.set(module, Math.min(low.get(module) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(module, Math.min(low.get(module) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const group: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      group.push(member);
      if (member === module) break;
    }
    if (group.length > 1) groups.push(group.sort(compareText));
  };
  for (const module of modules) if (!index.has(module)) connect(module);
  return groups.sort((a, b) => compareText(a.join(' '), b.join(' ')));
}

export const BEGIN_MARKER =
  '<!-- module-graph:begin (generated by `npm run docs:architecture` from the imports of src/; do not edit by hand) -->';
export const END_MARKER = '<!-- module-graph:end -->';

function nodeId(module: string): string {
  return module.replace(/[^a-z0-9]/gi, '_');
}

function sameCycle(graph: ModuleGraph, edge: ModuleEdge): boolean {
  return graph.cycles.some((group) => group.includes(edge.from) && group.includes(edge.to));
}

/** Edges drawn: no wiring; into a platform file only when the edge closes a cycle (nearly every module uses them). */
function drawnEdges(graph: ModuleGraph): ModuleEdge[] {
  return graph.edges.filter(
    (edge) => !isWiring(edge.from) && !isWiring(edge.to) && (!isPlatformFile(edge.to) || sameCycle(graph, edge)),
  );
}

function renderMermaid(graph: ModuleGraph): string[] {
  const drawn = drawnEdges(graph);
  const nodes = [...new Set(drawn.flatMap((edge) => [edge.from, edge.to]))].sort(compareText);
  const lines = ['```mermaid', 'flowchart LR', ...nodes.map((module) => `  ${nodeId(module)}["${module}"]`)];
  const cycleLinks: number[] = [];
  drawn.forEach((edge, position) => {
    lines.push(`  ${nodeId(edge.from)} ${edge.typeOnly ? '-.->' : '-->'} ${nodeId(edge.to)}`);
    if (sameCycle(graph, edge)) cycleLinks.push(position);
  });
  if (cycleLinks.length > 0) lines.push(`  linkStyle ${cycleLinks.join(',')} stroke:#d00,stroke-width:2px`);
  lines.push('```');
  return lines;
}

function kindOf(module: string): string {
  if (isWiring(module)) return ' (wiring)';
  return isPlatformFile(module) ? ' (platform)' : '';
}

function renderTable(graph: ModuleGraph): string[] {
  const lines = ['| module | depends on (`type`: type-only imports) |', '|---|---|'];
  for (const module of graph.modules) {
    const targets = graph.edges
      .filter((edge) => edge.from === module)
      .map((edge) => (edge.typeOnly ? `${edge.to} (type)` : edge.to));
    lines.push(`| ${module}${kindOf(module)} | ${targets.length === 0 ? '—' : targets.join(', ')} |`);
  }
  return lines;
}

const LISTED_IMPORTS_MAX = 3;

function describeImports(edge: ModuleEdge): string {
  const listed = edge.imports
    .slice(0, LISTED_IMPORTS_MAX)
    .map((entry) => `\`${entry.fromFile}\` → \`${entry.toFile}\``);
  const more = edge.imports.length - listed.length;
  return more > 0 ? `${listed.join(', ')} and ${more} more` : listed.join(', ');
}

function renderCycles(graph: ModuleGraph): string[] {
  if (graph.cycles.length === 0) return ['No module-level cycles.'];
  const lines = [
    `Module-level cycles (${graph.cycles.length}), red in the diagram, with the imports that close them:`,
    '',
  ];
  for (const group of graph.cycles) {
    lines.push(`- ${group.join(', ')}`);
    for (const edge of graph.edges.filter(
      (candidate) => sameCycle(graph, candidate) && group.includes(candidate.from),
    )) {
      lines.push(`  - ${edge.from} → ${edge.to}${edge.typeOnly ? ' (type)' : ''}: ${describeImports(edge)}`);
    }
  }
  return lines;
}

/** The generated part of docs/ARCHITECTURE.md, markers included. */
export function renderModuleGraph(graph: ModuleGraph): string {
  const wiring = WIRING.map((file) => `\`${file}\``).join(', ');
  const intro = [
    'A module is a top-level folder of `src/` or a subfolder of `src/crypto/`; each other top-level file of',
    '`src/` (platform) is a node of its own. Wiring (' + wiring + ') assembles the modules: it is in',
    'the table, not in the diagram. Edges into platform files are drawn only where they close a cycle.',
    'Dotted arrows and `(type)` are type-only imports; they count.',
  ];
  const body = [...intro, '', ...renderMermaid(graph), '', ...renderTable(graph), '', ...renderCycles(graph)];
  return [BEGIN_MARKER, ...body, END_MARKER].join('\n');
}

/** The document with its generated part replaced; throws when the markers are missing. */
export function replaceGenerated(document: string, generated: string): string {
  const begin = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (begin < 0 || end < begin)
    throw new Error(`docs/ARCHITECTURE.md lacks the markers ${BEGIN_MARKER} … ${END_MARKER}`);
  return document.slice(0, begin) + generated + document.slice(end + END_MARKER.length);
}

export const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
export const architecturePath = join(repositoryRoot, 'docs', 'ARCHITECTURE.md');

/** What docs/ARCHITECTURE.md should contain, given the sources as they are. */
export function expectedArchitectureDocument(): string {
  const graph = buildGraph(readImports(join(repositoryRoot, 'src')));
  return replaceGenerated(readFileSync(architecturePath, 'utf8'), renderModuleGraph(graph));
}
