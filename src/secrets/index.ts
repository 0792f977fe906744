/** Secrets at rest: sealing what GenGate stores (webhook secrets, credentials) with a key kept outside the database. */
export { SecretBox, SecretKeyMissing, secretKey, type SecretKey, type SecretKeys } from './box.js';
export { loadSecretKeys, KEY_FILE, type KeySettings } from './keys.js';
