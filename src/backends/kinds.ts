import type { BackendKind } from './registry.js';
import { SAME_API_KIND } from './registry.js';
import { createComfyBackend } from './comfyui/index.js';
import { createBytePlusBackend, DEFAULT_BASE_URL as BYTEPLUS_URL } from './byteplus/index.js';
import { createFalBackend, DEFAULT_BASE_URL as FAL_URL } from './fal/index.js';
import { createKieBackend, DEFAULT_BASE_URL as KIE_URL } from './kie/index.js';
import { createReplicateBackend, DEFAULT_BASE_URL as REPLICATE_URL } from './replicate/index.js';

/** Every upstream backend kind of this build, by the name catalog routes use (src/catalog/routes.ts BACKEND_KINDS). */
export const BACKEND_KINDS_BUILT: Readonly<Record<string, BackendKind>> = {
  'same-api': SAME_API_KIND,
  byteplus: { create: createBytePlusBackend, defaultBaseUrl: BYTEPLUS_URL },
  fal: { create: createFalBackend, defaultBaseUrl: FAL_URL },
  replicate: { create: createReplicateBackend, defaultBaseUrl: REPLICATE_URL },
  kie: { create: createKieBackend, defaultBaseUrl: KIE_URL },
  comfyui: { create: createComfyBackend, keyOptional: true },
};
