import { sql, type Kysely } from 'kysely';

/**
 * Members of accounts and their sign-in (issue 19, decision 1903): people with an email and a
 * password hash, browser sessions, invites and password-reset links. Tokens (session, invite,
 * reset) are kept only as SHA-256 hashes. Frozen text, like every released migration: see 006.
 */
const STATEMENTS = [
  `create table members (
    id text primary key,
    account_id text not null references accounts (id),
    email text not null,
    password_hash text not null,
    role text not null check (role in ('owner', 'member', 'operator')),
    created_at bigint not null,
    password_changed_at bigint not null
  )`,
  'create unique index members_email on members (email)',
  'create index members_account on members (account_id)',
  `create table member_sessions (
    id text primary key,
    token_hash text not null,
    account_id text not null references accounts (id),
    member_id text,
    key_id text,
    scopes text,
    csrf text not null,
    created_at bigint not null,
    expires_at bigint not null,
    revoked_at bigint,
    address text,
    user_agent text
  )`,
  'create unique index member_sessions_token on member_sessions (token_hash)',
  'create index member_sessions_member on member_sessions (member_id)',
  `create table member_invites (
    id text primary key,
    token_hash text not null,
    account_id text not null references accounts (id),
    email text not null,
    role text not null check (role in ('owner', 'member')),
    invited_by text,
    created_at bigint not null,
    expires_at bigint not null,
    accepted_at bigint
  )`,
  'create unique index member_invites_token on member_invites (token_hash)',
  `create table password_resets (
    token_hash text primary key,
    member_id text not null,
    created_at bigint not null,
    expires_at bigint not null,
    used_at bigint
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const text of STATEMENTS) await sql.raw(text).execute(db);
}
