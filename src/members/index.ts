/** Members of accounts and their sign-in: passwords (scrypt), sessions, invites, password resets (decision 1903). */
export { Members, ROLES, INVITE_ROLES, READ_ONLY_SCOPES, emailOf, type MemberView, type InviteView, type SignedIn, type SignupMode } from './members.js';
export { Sessions, type SessionInfo, type SessionView, type ClientMeta } from './sessions.js';
export { Mailer } from './mail.js';
export { hashPassword, verifyPassword, dummyHash, HASH_PARAMS } from './passwords.js';
export { normalEmail } from './tokens.js';
export { HashPool, useHashPool, hashPool, WORKER_CODE, type HashPoolOptions } from './hash-pool.js';
