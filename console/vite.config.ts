// Builds the console (console/) into dist/console: hashed assets under /console/assets/, served by
// src/http/routes/console.ts. No plugin: esbuild compiles the JSX for Preact. Decision 2000.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  logLevel: 'warn',
  publicDir: false,
  // Always the production build, also when run under NODE_ENV=test (the build test, the browser tests).
  mode: 'production',
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact', jsxDev: false },
  build: {
    outDir: process.env.CONSOLE_OUT_DIR ?? fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    chunkSizeWarningLimit: 200,
  },
});
