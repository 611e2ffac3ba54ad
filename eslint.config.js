// Lint rules on top of the type checker: typescript-eslint's recommended set,
// and the module boundary of docs/ARCHITECTURE.md: a module reaches another
// only through its service functions, never its repository (SQL) or tables.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'coverage/'] },
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
    // src/db/schema.ts joins every module's table types for Kysely: the one allowed reader.
    ignores: ['src/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // "../<other module>/<name>-repository.ts" or "-tables.ts", from any depth inside a module.
              regex: '^(\\.\\./)+[a-z]+/[a-z-]+-(repository|tables)\\.ts$',
              message: "Another module's repository or tables: call that module's service functions instead (docs/ARCHITECTURE.md).",
            },
          ],
        },
      ],
    },
  },
);
