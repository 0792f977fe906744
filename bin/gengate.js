#!/usr/bin/env node
// Runs the TypeScript entry point through tsx, so `npm install` is all the build there is.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
