// Members: the account's members and pending invites (owners invite, change roles, remove, withdraw an
// invite), and the signed-in member's own sessions. Only /api/v1/auth/members, /invites and /sessions (decision 2003).
import { useState } from 'preact/hooks';
import { api, settings, type Session } from '../api.js';
import { when } from '../format.js';
import { refreshSession, useSession } from '../session.js';
import { ConfirmButton, CopyButton, Empty, ErrorBox, Loading, Page, useAction, useGet } from '../ui.js';

type Role = 'owner' | 'member' | 'operator';

interface MemberView {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

interface InviteView {
  id: string;
  email: string;
  role: 'owner' | 'member';
  createdAt: string;
  expiresAt: string;
}

interface SessionRow {
  id: string;
  createdAt: string;
  expiresAt: string;
  address: string | null;
  userAgent: string | null;
  current: boolean;
}

const at = (iso: string) => when(Date.parse(iso));

function InviteForm({ onInvited }: { onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'member' | 'owner'>('member');
  const { busy, error, run } = useAction();
  const [made, setMade] = useState<{ email: string; url: string; emailed: boolean } | null>(null);
  const mail = settings().mail;
  const submit = (e: Event) => {
    e.preventDefault();
    setMade(null);
    void run(async () => {
      const r = await api<{ invite: InviteView; url: string; emailed: boolean }>('POST', '/api/v1/auth/members/invite', { email: email.trim(), role });
      setMade({ email: r.invite.email, url: r.url, emailed: r.emailed });
      setEmail('');
      setRole('member');
      onInvited();
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <p class="muted">
        The link is valid 7 days, once: the person opens it, chooses a password and is signed in to this account.{' '}
        {mail ? 'This server emails it to them too (SMTP is set).' : 'This server sends no email (SMTP_URL is not set): pass the link on yourself.'}
      </p>
      <ErrorBox error={error} title="Not invited" />
      {made && (
        <div class="alert info" role="status">
          <p>
            The invite link for {made.email}, shown only this once
            {made.emailed ? ' (it was emailed to them too)' : ''}:
          </p>
          <pre class="secret" id="invite-link" data-testid="invite-link" tabIndex={0} aria-label="The invite link">
            {made.url}
          </pre>
          <div class="row">
            <CopyButton text={made.url} selectId="invite-link" label="Copy the link" />
            <button type="button" class="link" onClick={() => setMade(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      <div class="filters">
        <div class="field">
          <label for="i-email">Email</label>
          <input id="i-email" type="email" required maxLength={300} value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="i-role">Role</label>
          <select id="i-role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as 'member' | 'owner')}>
            <option value="member">member</option>
            <option value="owner">owner</option>
          </select>
        </div>
      </div>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Inviting…' : 'Send the invite'}
      </button>
    </form>
  );
}

/** An owner's role select: the change is made at once; a refusal (the last owner) is shown in the row. */
function RoleSelect({ m, me, onChanged }: { m: MemberView; me: Session; onChanged: () => void }) {
  const { error, run } = useAction();
  if (m.role === 'operator') return <>operator</>;
  const change = async (role: string) => {
    await run(async () => {
      await api('POST', `/api/v1/auth/members/${encodeURIComponent(m.id)}/role`, { role });
      if (m.id === me.member?.id) await refreshSession();
    });
    onChanged();
  };
  return (
    <>
      <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => void change((e.target as HTMLSelectElement).value)}>
        <option value="member">member</option>
        <option value="owner">owner</option>
      </select>
      <ErrorBox error={error} title="Not changed" />
    </>
  );
}

function MemberTable({ rows, me, manage, onChanged }: { rows: MemberView[]; me: Session; manage: boolean; onChanged: () => void }) {
  return (
    <table class="tasks members">
      <caption class="sr-only">The account's members</caption>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">Member since</th>
          {manage && <th scope="col">Remove</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={m.id} data-member={m.email}>
            <td data-label="Email">
              {m.email}
              {m.id === me.member?.id && <span class="badge">you</span>}
            </td>
            <td data-label="Role">{manage ? <RoleSelect m={m} me={me} onChanged={onChanged} /> : m.role}</td>
            <td data-label="Member since">{at(m.createdAt)}</td>
            {manage && (
              <td data-label="Remove">
                {m.role !== 'operator' && (
                  <ConfirmButton
                    label="Remove"
                    name={`Remove ${m.email}`}
                    run={async () => {
                      await api('POST', `/api/v1/auth/members/${encodeURIComponent(m.id)}/remove`);
                      onChanged();
                    }}
                    errorTitle="Not removed"
                  />
                )}
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function InviteTable({ rows, manage, onChanged }: { rows: InviteView[]; manage: boolean; onChanged: () => void }) {
  return (
    <table class="tasks invites">
      <caption class="sr-only">Pending invites</caption>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">Invited</th>
          <th scope="col">Expires</th>
          {manage && <th scope="col">Withdraw</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((i) => (
          <tr key={i.id} data-invite={i.email}>
            <td data-label="Email">{i.email}</td>
            <td data-label="Role">{i.role}</td>
            <td data-label="Invited">{at(i.createdAt)}</td>
            <td data-label="Expires">{at(i.expiresAt)}</td>
            {manage && (
              <td data-label="Withdraw">
                <ConfirmButton
                  label="Withdraw"
                  name={`Withdraw the invite of ${i.email}`}
                  run={async () => {
                    await api('POST', `/api/v1/auth/invites/${encodeURIComponent(i.id)}/revoke`);
                    onChanged();
                  }}
                  errorTitle="Not withdrawn"
                />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Sessions() {
  const [tick, setTick] = useState(0);
  const { error, run } = useAction();
  const { data: rows, error: listError } = useGet<SessionRow[]>('/api/v1/auth/sessions', tick);
  const end = async (id: string) => {
    await run(() => api('POST', `/api/v1/auth/sessions/${encodeURIComponent(id)}/revoke`));
    setTick((n) => n + 1);
  };
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Your sessions</h2>
      <p class="muted">Where you are signed in. Signing a session out ends it at once, on every server.</p>
      <ErrorBox error={listError} title="Your sessions cannot be listed" />
      <ErrorBox error={error} title="Not signed out" />
      {!rows && !listError && <Loading what="your sessions" />}
      {rows && (
        <table class="tasks sessions">
          <caption class="sr-only">Your live sessions</caption>
          <thead>
            <tr>
              <th scope="col">Signed in</th>
              <th scope="col">From</th>
              <th scope="col">Browser</th>
              <th scope="col">Ends</th>
              <th scope="col">Sign out</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-session-id={r.id}>
                <td data-label="Signed in">{at(r.createdAt)}</td>
                <td data-label="From">{r.address ?? '—'}</td>
                <td data-label="Browser">{r.userAgent ?? '—'}</td>
                <td data-label="Ends">{at(r.expiresAt)}</td>
                <td data-label="Sign out">
                  {r.current ? (
                    <span class="badge">this session</span>
                  ) : (
                    <button
                      onClick={() => void end(r.id)}
                      aria-label={`Sign out the session signed in ${at(r.createdAt)} from ${r.address ?? 'an unknown address'}`}
                    >
                      Sign out
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function Members() {
  const state = useSession();
  const me = state.status === 'in' ? state.session : null;
  const [tick, setTick] = useState(0);
  if (!me?.member) {
    return (
      <Page title="Members">
        <p class="alert info" role="status">
          Members are managed by the account's owners. This session was opened with an API key, so it has no member: sign in with your email and password to see
          the account's members and your sessions.
        </p>
      </Page>
    );
  }
  return <MemberPage me={me} tick={tick} onChanged={() => setTick((n) => n + 1)} />;
}

function MemberPage({ me, tick, onChanged }: { me: Session; tick: number; onChanged: () => void }) {
  const manage = me.role !== 'member';
  const members = useGet<MemberView[]>('/api/v1/auth/members', tick);
  const invites = useGet<InviteView[]>('/api/v1/auth/invites', tick);
  return (
    <Page title="Members">
      <p class="muted">
        The people who sign in to {me.account.name}.{' '}
        {manage
          ? 'As an owner you invite people, change their roles and remove them; an account keeps at least one owner.'
          : 'Only an owner invites people, changes roles and removes members; ask one of the owners below.'}
      </p>
      {manage && <InviteForm onInvited={onChanged} />}
      <h2>The account's members</h2>
      <ErrorBox error={members.error} title="The members cannot be listed" />
      {!members.data && !members.error && <Loading what="members" />}
      {members.data && <MemberTable rows={members.data} me={me} manage={manage} onChanged={onChanged} />}
      <h2>Pending invites</h2>
      <ErrorBox error={invites.error} title="The invites cannot be listed" />
      {!invites.data && !invites.error && <Loading what="invites" />}
      {invites.data && invites.data.length === 0 && <Empty>No invite is waiting to be accepted.</Empty>}
      {invites.data && invites.data.length > 0 && <InviteTable rows={invites.data} manage={manage} onChanged={onChanged} />}
      <Sessions />
    </Page>
  );
}
