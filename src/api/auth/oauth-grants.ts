import { z } from 'zod';
import { parseWith } from '../../errors.js';
import { adminIdParams } from '../admin.js';
import type { AuthCall } from './operation.js';
import { authOp } from './operation.js';

/** A grant a member gave an OAuth client (decision 2202). */
export const OAuthGrant = z.object({
  id: z.string(),
  clientId: z.string(),
  clientName: z.string(),
  scopes: z.array(z.string()),
  keyId: z.string().describe('the API key made for the grant: its tokens act as this key; revoking either ends both'),
  createdAt: z.string(),
  revokedAt: z
    .string()
    .nullable()
    .describe(
      'when the grant ended: revoked by the member, its refresh token revoked or reused, or its code never exchanged (then as of the code expiry, 10 minutes after createdAt)',
    ),
});

const consenter = (call: AuthCall) => {
  const s = call.session!;
  return { accountId: s.accountId, memberId: s.member!.id, role: s.member!.role };
};

export const listOAuthGrants = authOp(
  'member',
  {
    method: 'get',
    path: '/api/v1/auth/oauth-grants',
    id: 'listOAuthGrants',
    summary: 'The OAuth grants the signed-in member gave MCP clients (newest first, revoked ones too)',
    ok: [z.array(OAuthGrant), 'Grants'],
  },
  async (s, call) => ({ data: await s.oauth.listGrants(call.session!.member!.id) }),
);

export const revokeOAuthGrant = authOp(
  'member',
  {
    method: 'post',
    path: '/api/v1/auth/oauth-grants/:id/revoke',
    id: 'revokeOAuthGrant',
    summary: 'Revoke an OAuth grant: its access and refresh tokens and its API key stop working at once',
    params: { id: 'The grant id (grt_...)' },
    ok: [OAuthGrant, 'The revoked grant'],
    errors: ['not_found'],
  },
  async (s, call) => ({ data: await s.oauth.revokeGrant(parseWith(adminIdParams, call.params, '').id, consenter(call)) }),
);
