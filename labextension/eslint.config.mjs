// ESLint flat config: the recommended rules of ESLint and typescript-eslint for the
// sources and the jest tests. Formatting is Prettier's job (.prettierrc), not ESLint's.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['lib/', 'node_modules/', '*.js'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `export namespace Foo { export interface IOptions }` next to `class Foo` is the Lumino/JupyterLab idiom.
      '@typescript-eslint/no-namespace': 'off'
    }
  }
);
