// ESLint flat config: typescript-eslint's recommended rules (the untyped set: fast, see decision 0022),
// import cycles (import-x/no-cycle with TypeScript resolution) and the capability rule (a local rule below).
import path from 'node:path';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const root = import.meta.dirname;
const src = path.join(root, 'src');

/** The capability a file under src/ belongs to: its first folder below src/, or null for a shared top-level module (clock.ts, config.ts, ...). */
function capabilityOf(file) {
  const rel = path.relative(src, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  return parts.length > 1 ? parts[0] : null;
}

/**
 * ARCHITECTURE.md: "A folder is a capability; its index.ts is its public face, and other capabilities import only that."
 * Sub-folders (backends/local/, store/migrations/) belong to their capability, so only src/X/index.js is open to files outside X;
 * top-level modules of src/ are shared and open to all. Type-only imports count too: a deep type import still couples to internals.
 */
const capabilityImports = {
  meta: {
    type: 'problem',
    docs: { description: 'Outside folder X of src/, import only X/index.js' },
    messages: { deep: "'{{spec}}' reaches into {{cap}}/ from outside it; import '{{cap}}/index.js' (export it there if needed)" },
    schema: [],
  },
  create(context) {
    const importer = context.filename;
    const own = capabilityOf(importer);
    function check(source) {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.resolve(path.dirname(importer), source.value);
      const cap = capabilityOf(target);
      if (cap === null || cap === own) return;
      if (path.relative(path.join(src, cap), target) === 'index.js') return;
      context.report({ node: source, messageId: 'deep', data: { spec: source.value, cap } });
    }
    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source.type === 'Literal' ? node.source : null),
    };
  },
};

export default defineConfig(
  { ignores: ['node_modules/', 'data/', 'bench/results/', '.tmp/', 'dist/', 'packages/*/dist/', '.ci/cache/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      // The few Node globals the two .js files use (TypeScript checks the .ts files' globals itself).
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', performance: 'readonly' },
    },
    plugins: { 'import-x': importX },
    settings: {
      // import-x parses only the extensions listed here, so without .ts no-cycle would never follow an import.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: path.join(root, 'tsconfig.json') })],
    },
    rules: {
      // `const { drop: _drop, ...rest } = x` is how this code base leaves out a field; a leading _ marks an unused binding on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      // Type imports are erased, so only value imports can form a cycle that matters at load time.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // A migration takes Kysely<any> on purpose (Kysely's own advice): it must not depend on today's schema types.
    files: ['src/store/migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read JSON answers whose shape is what they assert: `any` there is the honest type.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Only src/ is held to capabilities: tests, bench and scripts test or measure internals directly (decision 0022).
    files: ['src/**/*.ts'],
    plugins: { gengate: { rules: { 'capability-imports': capabilityImports } } },
    rules: { 'gengate/capability-imports': 'error' },
  },
  {
    // CommonJS shims (packages/sqlite-node20: re-exports a CommonJS native module).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
