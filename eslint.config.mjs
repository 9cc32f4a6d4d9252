// One lint configuration for the whole tree: typescript-eslint with type information for the TypeScript sources,
// ESLint's recommended rules for the plain JavaScript. Formatting belongs to Prettier (.prettierrc), not to ESLint.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'src/receiver/dist/',
      'coverage/',
      '.data/',
      'bench/results/',
      'test/fixtures/',
      'node_modules/',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Off: `any` enters only at typed edges (JSON.parse, pg rows, test assertions on parsed bodies), where TypeBox
      // or the row types check it; these five flag each use after that (600+ findings) and cost half the lint time.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // An abort rejects with the signal's own reason, whatever its type, as Node's timers/promises do.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // Off: modules loaded on demand use require(), because under tsx's CommonJS hook import() skips the TS loader.
      '@typescript-eslint/no-require-imports': 'off',
      // Off: an async function without await is how a handler or an interface method returns a promise here.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    rules: {
      // A `let` read by a callback made before its one assignment cannot be const (it would throw before it).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Off: the input validators and sanitisers match control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read parsed JSON bodies and Temporal history events loosely; product code stays without `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Node scripts and the CLI launcher: CommonJS.
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: globals.node },
  },
  {
    // The developers page's script runs in the browser.
    files: ['src/dashboard/assets/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },
);
