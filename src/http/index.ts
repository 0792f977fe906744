/** HTTP, the Fastify face: the app with its plugins (auth, limits, errors, request log) and routes that mount the api/ operations. */
export { buildApp, REDACT } from './app.js';
