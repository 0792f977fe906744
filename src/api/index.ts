/**
 * The protocol layer every entry point shares (REST routes in http/, MCP tools, the OpenAPI
 * document): the envelope, request schemas and their parsing, one module per operation with a
 * handler (spec + handler), key-call accounting. It depends on the domain; the domain never imports it.
 */
export { ok, okJson, failure } from './envelope.js';
export { countKeyCall, hitKeyCall, limitRefusal } from './key-calls.js';
export { jsonSchema, API_DOC_VERSION } from './json-schema.js';
export type { Operation, Reply, Tag, KeyedOperation, KeyedCall, Answer } from './operation.js';
export { OPERATIONS, KEYED_OPERATIONS } from './operations.js';
export { CONSOLE_PAGES, CONSOLE_ASSETS_PATH } from './console.js';
export { createTask, idempotencyKey, readIdempotencyKey } from './tasks/create-task.js';
export { recordInfo, recordInfoQuery, readTaskId } from './tasks/record-info.js';
export { listTasks, listQuery, parseListQuery } from './tasks/list-tasks.js';
export { sunoGenerate } from './kie/generate.js';
export { sunoRecordInfo } from './kie/generate-record-info.js';
export { cancelTask, cancelBody } from './tasks/cancel-task.js';
export { balance, balanceView } from './balance.js';
export { createTopup, listTopups, topupBody } from './payments.js';
export { ADMIN_OPERATIONS, adminBodies, adminIdParams, type AdminOperation, type AdminCall } from './admin.js';
export { calculatorParams } from './pricing.js';
export { listKeys, createKey, updateKey, revokeKey, getAccount, AccountAnswer } from './keys.js';
export { keyBodies } from './key-bodies.js';
export { AUTH_OPERATIONS, SESSION_COOKIE, CSRF_HEADER, type AuthOperation, type AuthCall, type AuthAnswer, type SessionNeed } from './auth/index.js';
export { chatCredit } from './kie/credit.js';
export { downloadUrl, downloadUrlBody, DOWNLOAD_LINK_MS } from './kie/download-url.js';
export { KIE_UPLOADS, base64UploadBody, urlUploadBody } from './kie/uploads.js';
export { maxUploadBytes, uploadFromBase64, uploadFromUrl } from './upload-sources.js';
export { streamBase64Body } from './base64-body.js';
export { callBackUrl } from '../tasks/index.js';
export * as ReplySchemas from './schemas.js';
