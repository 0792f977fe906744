import { z } from 'zod';
import { parseWith } from '../../errors.js';
import { adminIdParams } from '../admin.js';
import { authOp, SessionAnswer, sessionAnswer, SessionRow } from './operation.js';

export const currentSession = authOp(
  'any',
  {
    method: 'get',
    path: '/api/v1/auth/session',
    id: 'currentSession',
    summary: 'The session of the cookie: member, account, role and csrfToken',
    ok: [SessionAnswer, 'The session'],
  },
  async (_s, call) => ({ data: sessionAnswer(call.session!) }),
);

export const listSessions = authOp(
  'member',
  {
    method: 'get',
    path: '/api/v1/auth/sessions',
    id: 'listSessions',
    summary: "The signed-in member's live sessions",
    ok: [z.array(SessionRow), 'Live sessions, newest first'],
  },
  async (s, call) => ({ data: await s.members.sessions.list(call.session!.member!.id, call.session!.id) }),
);

export const revokeSession = authOp(
  'member',
  {
    method: 'post',
    path: '/api/v1/auth/sessions/:id/revoke',
    id: 'revokeSession',
    summary: "Revoke one of the signed-in member's sessions (refused at once everywhere)",
    params: { id: 'The session id (ses_...)' },
    ok: [SessionRow, 'The session'],
    errors: ['not_found'],
  },
  async (s, call) => {
    const { id } = parseWith(adminIdParams, call.params, '');
    const view = await s.members.sessions.revoke(id, call.session!.member!.id);
    return { data: { ...view, current: id === call.session!.id }, ...(id === call.session!.id ? { signedOut: true } : {}) };
  },
);
