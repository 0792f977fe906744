/** The OpenAPI 3.1 face of the api/ operations: the document, generated from their specs and the catalog. */
export { buildDocument, openApiPath } from './document.js';
