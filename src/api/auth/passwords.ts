import { z } from 'zod';
import { parseWith } from '../../errors.js';
import { emailOf } from '../../members/index.js';
import { authOp } from './operation.js';
import { limitSignIn } from './sign-in.js';

export const passwordBodies = {
  forgot: z.object({ email: z.string().max(300) }).strict(),
  change: z.object({ currentPassword: z.string().max(1000), password: z.string().max(1000).describe('the new password, 10 to 200 characters') }).strict(),
  reset: z.object({ token: z.string().max(200).describe('the token of the reset link (after #token=)'), password: z.string().max(1000) }).strict(),
};

export const forgotPassword = authOp(
  'none',
  {
    method: 'post',
    path: '/api/v1/auth/password/forgot',
    id: 'forgotPassword',
    summary: 'Email a one-time password reset link (valid 1 hour)',
    description:
      "Always 202 for a well-formed email, known or not; the link goes to a member's address only. Needs SMTP_URL (403 without: the operator resets passwords with `gengate member reset-password`). Rate limited like sign-in.",
    body: passwordBodies.forgot,
    ok: [z.null(), 'Accepted: an email is on its way when the address belongs to a member', 202],
    errors: ['invalid_request', 'missing_field', 'forbidden', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(passwordBodies.forgot, call.body, '');
    const email = emailOf(body.email);
    await limitSignIn(s, call.meta.address, email);
    await s.members.requestReset(email);
    return { data: null, status: 202 };
  },
);

export const resetPassword = authOp(
  'none',
  {
    method: 'post',
    path: '/api/v1/auth/password/reset',
    id: 'resetPassword',
    summary: 'Set a new password with the token of a reset link (once); every session of the member is revoked',
    body: passwordBodies.reset,
    ok: [z.object({ email: z.string(), sessionsRevoked: z.number().int() }), 'The password is changed: sign in with it'],
    errors: ['invalid_request', 'missing_field', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(passwordBodies.reset, call.body, '');
    await limitSignIn(s, call.meta.address, null);
    const r = await s.members.resetPassword(body.token, body.password);
    return { data: { email: r.member.email, sessionsRevoked: r.sessionsRevoked } };
  },
);

export const changePassword = authOp(
  'member',
  {
    method: 'post',
    path: '/api/v1/auth/password/change',
    id: 'changePassword',
    summary: "Change the signed-in member's password; their other sessions end and every reset link is spent",
    body: passwordBodies.change,
    ok: [z.object({ sessionsRevoked: z.number().int() }), 'The password is changed; this session stays'],
    errors: ['invalid_request', 'missing_field', 'rate_limited'],
  },
  async (s, call) => {
    const body = parseWith(passwordBodies.change, call.body, '');
    const member = call.session!.member!;
    await limitSignIn(s, call.meta.address, member.email);
    return { data: await s.members.changePassword(member.id, body.currentPassword, body.password, call.session!.id) };
  },
);
