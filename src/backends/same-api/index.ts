/** The same-API adapter: another service speaking SPEC.md's API as a generation backend. */
export { SameApiBackend, createSameApiBackend, failKind, resultLinks, type SameApiOptions } from './backend.js';
