/** @gengate/client: the TypeScript client of GenGate (docs/sdk.md). No dependencies beyond fetch; Node 20 and browsers. */
export { GenGate, type GenGateOptions, type TaskList } from './client.js';
export * from './errors.js';
export type { UploadOptions, UploadSource } from './files.js';
export type { InputOf, ModelInputs, ModelName } from './models.js';
export * from './models.js';
export { fileLink, microsOf, resultFiles, resultOf } from './results.js';
export type * from './types.js';
export { verifyWebhook, WebhookVerificationError, type VerifyOptions, type WebhookHeaders, type WebhookPayload } from './webhooks.js';
