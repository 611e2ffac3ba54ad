// Lint rules on top of the type checker: typescript-eslint's recommended set,
// and the module boundaries of docs/ARCHITECTURE.md, per folder
// (eslint-plugin-boundaries): a module is a folder of src/ (a folder of
// src/crypto/ for the crypto modules); another module, the CLI or the runtime
// may import any of its files except its internals, `*-repository.ts` (its SQL)
// and `*-tables.ts` (its table types): they go through its service. Only
// src/db/schema.ts joins every module's tables.
import boundaries from 'eslint-plugin-boundaries';
import tseslint from 'typescript-eslint';

/**
 * Raw HTML in a view: Preact's `dangerouslySetInnerHTML={{ __html }}`, written as a prop, an
 * object key, or inside an htm template. The cabinet's views escape everything; nothing bypasses it.
 */
const RAW_HTML_MESSAGE = 'Raw HTML bypasses escaping: render text and elements with html`…` instead.';
const RAW_HTML_SELECTORS = [
  "Identifier[name='dangerouslySetInnerHTML']",
  "Identifier[name='__html']",
  'Literal[value=/dangerouslySetInnerHTML|__html/]',
  'TemplateElement[value.raw=/dangerouslySetInnerHTML|__html/]',
].map((selector) => ({ selector, message: RAW_HTML_MESSAGE }));

/** A module's internals: nothing outside its folder imports them. */
const INTERNALS = ['**/*-repository.ts', '**/*-tables.ts'];

export default tseslint.config(
  { ignores: ['node_modules/', '**/dist/', 'data/', 'coverage/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { boundaries },
    settings: {
      // First match wins: a crypto module before the src/crypto folder itself.
      'boundaries/elements': [
        { type: 'db', pattern: 'src/db' },
        { type: 'module', pattern: 'src/crypto/*', capture: ['name'] },
        { type: 'module', pattern: 'src/*', capture: ['name'] },
        { type: 'wiring', pattern: 'src' },
      ],
      'boundaries/include': ['src/**/*.ts'],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'allow',
          policies: [
            {
              from: { element: { types: ['module', 'wiring'] } },
              disallow: {
                to: { element: { types: ['module'], fileInternalPath: INTERNALS } },
                dependency: { relationship: { to: [null, '!internal'] } },
              },
              message:
                "Another module's repository or tables: call that module's service instead (docs/ARCHITECTURE.md).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cabinet/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...RAW_HTML_SELECTORS] },
  },
);
