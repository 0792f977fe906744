import type { AuthOperation } from './operation.js';
import { acceptInvite, inviteMember, listInvites, listMembers, removeMember, revokeInvite, setMemberRole } from './members.js';
import { listOAuthGrants, revokeOAuthGrant } from './oauth-grants.js';
import { changePassword, forgotPassword, resetPassword } from './passwords.js';
import { currentSession, listSessions, revokeSession } from './sessions.js';
import { signIn, signInKey, signOut, signUp } from './sign-in.js';

/** The members and sign-in operations (/api/v1/auth/*; decision 1903), mounted by http/ with the session cookie and CSRF checks. */
export const AUTH_OPERATIONS: AuthOperation[] = [
  signUp,
  signIn,
  signInKey,
  signOut,
  currentSession,
  listSessions,
  revokeSession,
  forgotPassword,
  resetPassword,
  changePassword,
  acceptInvite,
  listMembers,
  inviteMember,
  setMemberRole,
  removeMember,
  listInvites,
  revokeInvite,
  listOAuthGrants,
  revokeOAuthGrant,
];
export { SESSION_COOKIE, CSRF_HEADER, type AuthOperation, type AuthCall, type AuthAnswer, type SessionNeed } from './operation.js';
