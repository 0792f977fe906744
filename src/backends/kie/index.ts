/** The kie adapter: kie.ai as a generation upstream (DECISIONS §19). */
export { KieBackend, createKieBackend, resultUrls, sunoTracks, DEFAULT_BASE_URL, DEFAULT_UPLOAD_URL, type KieOptions } from './backend.js';
export { kieInput, kieRow, pickRow, sunoBody } from './input.js';
export { CREDIT_EVERY_MS } from './credit.js';
