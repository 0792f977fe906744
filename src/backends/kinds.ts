import type { BackendKind } from './registry.js';
import { SAME_API_KIND } from './registry.js';

/** Every upstream backend kind of this build, by the name catalog routes use (src/catalog/routes.ts BACKEND_KINDS). */
export const BACKEND_KINDS_BUILT: Readonly<Record<string, BackendKind>> = {
  'same-api': SAME_API_KIND,
};
