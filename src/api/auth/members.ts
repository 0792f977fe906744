import { z } from 'zod';
import { parseWith } from '../../errors.js';
import { adminIdParams } from '../admin.js';
import { authOp, Invite, Member, PendingInvite, SessionAnswer, sessionAnswer } from './operation.js';
import { limitInvites, limitSignIn } from './sign-in.js';

export const memberBodies = {
  invite: z.object({ email: z.string().max(300), role: z.enum(['owner', 'member']).optional().describe('member unless given') }).strict(),
  role: z.object({ role: z.enum(['owner', 'member']) }).strict(),
  accept: z.object({ token: z.string().max(200).describe('the token of the invite link (after #token=)'), password: z.string().max(1000) }).strict(),
};
const memberParam = { id: 'The member id (mem_...)' };

export const listMembers = authOp(
  'member',
  {
    method: 'get',
    path: '/api/v1/auth/members',
    id: 'listMembers',
    summary: "The members of the signed-in member's account (any member may look; owners manage them)",
    ok: [z.array(Member), 'Members'],
  },
  async (s, call) => ({ data: await s.members.list(call.session!.accountId) }),
);

export const listInvites = authOp(
  'member',
  {
    method: 'get',
    path: '/api/v1/auth/invites',
    id: 'listInvites',
    summary: "The account's pending invites (neither accepted nor expired), oldest first; never their links",
    ok: [z.array(PendingInvite), 'Pending invites'],
  },
  async (s, call) => ({ data: await s.members.listInvites(call.session!.accountId) }),
);

export const revokeInvite = authOp(
  'owner',
  {
    method: 'post',
    path: '/api/v1/auth/invites/:id/revoke',
    id: 'revokeInvite',
    summary: 'Withdraw a pending invite: its link is refused from now on',
    params: { id: 'The invite id (inv_...)' },
    ok: [PendingInvite, 'The withdrawn invite'],
    errors: ['invalid_request', 'not_found'],
  },
  async (s, call) => {
    const { id } = parseWith(adminIdParams, call.params, '');
    return { data: await s.members.revokeInvite(id, call.session!.accountId) };
  },
);

export const inviteMember = authOp(
  'owner',
  {
    method: 'post',
    path: '/api/v1/auth/members/invite',
    id: 'inviteMember',
    summary: 'Invite someone to the account by email (the link is valid 7 days, once)',
    description:
      'The link is emailed when SMTP_URL is set, and returned to the owner either way (url) to pass on. The answer is the same whether or not the email is already a member somewhere. Limited per account (INVITE_LIMIT_PER_ACCOUNT) and per client address (INVITE_LIMIT_PER_ADDRESS) per 24 hours (429).',
    body: memberBodies.invite,
    ok: [Invite, 'The invite'],
    errors: ['invalid_request', 'missing_field', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(memberBodies.invite, call.body, '');
    const session = call.session!;
    await limitInvites(s, session.accountId, call.meta.address);
    return { data: await s.members.invite(session.accountId, session.member!.id, body.email, body.role) };
  },
);

export const setMemberRole = authOp(
  'owner',
  {
    method: 'post',
    path: '/api/v1/auth/members/:id/role',
    id: 'setMemberRole',
    summary: "Change a member's role (owner or member); an account keeps at least one owner",
    params: memberParam,
    body: memberBodies.role,
    ok: [Member, 'The member'],
    errors: ['invalid_request', 'missing_field', 'not_found'],
  },
  async (s, call) => {
    const { id } = parseWith(adminIdParams, call.params, '');
    const body = parseWith(memberBodies.role, call.body, '');
    return { data: await s.members.setRole(id, body.role, call.session!.accountId) };
  },
);

export const removeMember = authOp(
  'owner',
  {
    method: 'post',
    path: '/api/v1/auth/members/:id/remove',
    id: 'removeMember',
    summary: 'Remove a member from the account (their sessions end at once); an account keeps at least one owner',
    params: memberParam,
    ok: [Member, 'The removed member'],
    errors: ['invalid_request', 'not_found'],
  },
  async (s, call) => {
    const { id } = parseWith(adminIdParams, call.params, '');
    return { data: await s.members.remove(id, call.session!.accountId) };
  },
);

export const acceptInvite = authOp(
  'none',
  {
    method: 'post',
    path: '/api/v1/auth/invites/accept',
    id: 'acceptInvite',
    summary: 'Accept an invite with a new password: the member is created and signed in',
    body: memberBodies.accept,
    ok: [SessionAnswer, 'The new session'],
    errors: ['invalid_request', 'missing_field', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(memberBodies.accept, call.body, '');
    await limitSignIn(s, call.meta.address, null);
    const r = await s.members.acceptInvite(body.token, body.password, call.meta);
    return { data: sessionAnswer(r.session), signedIn: { token: r.token, expiresAt: r.session.expiresAt } };
  },
);
