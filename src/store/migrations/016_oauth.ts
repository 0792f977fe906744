import { sql, type Kysely } from 'kysely';

/**
 * OAuth for the MCP endpoint (issue 22, decision 2202): clients registered dynamically (RFC 7591),
 * grants a member gave a client (each bound to an API key of the account, made for the grant, that
 * carries its scopes), and the grant's codes, access and refresh tokens, kept only as SHA-256
 * hashes. Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  `create table oauth_clients (
    id text primary key,
    name text not null,
    redirect_uris text not null,
    created_at bigint not null
  )`,
  `create table oauth_grants (
    id text primary key,
    client_id text not null references oauth_clients (id),
    account_id text not null references accounts (id),
    member_id text not null,
    key_id text not null references api_keys (id),
    scopes text not null,
    resource text not null,
    created_at bigint not null,
    revoked_at bigint
  )`,
  'create index oauth_grants_member on oauth_grants (member_id)',
  `create table oauth_tokens (
    hash text primary key,
    grant_id text not null references oauth_grants (id),
    kind text not null check (kind in ('code', 'access', 'refresh')),
    created_at bigint not null,
    expires_at bigint not null,
    used_at bigint,
    revoked_at bigint,
    redirect_uri text,
    code_challenge text
  )`,
  'create index oauth_tokens_grant on oauth_tokens (grant_id)',
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
