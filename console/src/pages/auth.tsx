// Sign in (password or API key), sign up (when open), forgot and reset password, accept an invite.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, settings, type Session } from '../api.js';
import { navigate, useLocation } from '../router.js';
import { signedIn, useSession } from '../session.js';
import { ErrorBox, Page, useAction } from '../ui.js';

/** A form that posts once at a time and shows the server's refusal in its own words. */
function AuthForm({ label, onSubmit, children }: { label: string; onSubmit: () => Promise<void>; children: ComponentChildren }) {
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(onSubmit);
  };
  return (
    <form class="card narrow" onSubmit={submit} noValidate={false}>
      <ErrorBox error={error} title="Not done" />
      {children}
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Please wait…' : label}
      </button>
    </form>
  );
}

function Field(props: {
  label: string;
  name: string;
  type?: 'text' | 'email' | 'password';
  value: string;
  set: (v: string) => void;
  autocomplete?: string;
  hint?: string;
  minLength?: number;
}) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        required
        value={props.value}
        minLength={props.minLength}
        autoComplete={props.autocomplete}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.set((e.target as HTMLInputElement).value)}
      />
      {props.hint && (
        <small id={`${id}-hint`} class="muted">
          {props.hint}
        </small>
      )}
    </div>
  );
}

const PASSWORD_HINT = '10 to 200 characters.';

/** A password being chosen: at least 10 characters, with the rule said under the field. */
function NewPassword({ label, value, set }: { label: string; value: string; set: (v: string) => void }) {
  return <Field label={label} name="password" type="password" value={value} set={set} autocomplete="new-password" minLength={10} hint={PASSWORD_HINT} />;
}

export function SignIn() {
  const loc = useLocation();
  const session = useSession();
  const [withKey, setWithKey] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [apiKey, setApiKey] = useState('');
  const s = settings();
  const next = loc.searchParams.get('next') ?? '/';
  const done = (session: Session) => {
    signedIn(session);
    const here = next.startsWith('/') && !next.startsWith('//') ? next : '/';
    // A server page (the OAuth consent) is loaded by the browser, not by the console's router.
    if (here.startsWith('/oauth/')) location.assign(here);
    else navigate(here, { replace: true });
  };
  return (
    <Page title="Sign in">
      {session.status === 'out' && session.reason && (
        <div class="alert info" role="status">
          {session.reason}
        </div>
      )}
      {withKey ? (
        <AuthForm
          label="Sign in with the key"
          onSubmit={async () => done(await api<Session>('POST', '/api/v1/auth/signin/key', { apiKey }, { quiet401: true }))}
        >
          <Field
            label="API key"
            name="apiKey"
            type="password"
            value={apiKey}
            set={setApiKey}
            autocomplete="off"
            hint="A key without scopes opens a read-only session."
          />
        </AuthForm>
      ) : (
        <AuthForm label="Sign in" onSubmit={async () => done(await api<Session>('POST', '/api/v1/auth/signin', { email, password }, { quiet401: true }))}>
          <Field label="Email" name="email" type="email" value={email} set={setEmail} autocomplete="username" />
          <Field label="Password" name="password" type="password" value={password} set={setPassword} autocomplete="current-password" />
        </AuthForm>
      )}
      <p class="links">
        <button class="link" onClick={() => setWithKey(!withKey)}>
          {withKey ? 'Sign in with email and password' : 'Sign in with an API key'}
        </button>
        {s.signup === 'open' && <a href="/signup">Create an account</a>}
        <a href="/forgot-password">Forgot your password?</a>
      </p>
    </Page>
  );
}

export function SignUp() {
  const s = settings();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [accountName, setAccountName] = useState('');
  const [made, setMade] = useState<Session | null>(null);
  if (s.signup !== 'open') {
    return (
      <Page title="Sign up">
        <div class="alert info" role="status">
          {s.signup === 'invite'
            ? 'Sign-up on this server is by invitation: open the link of your invite email.'
            : 'Sign-up is off on this server: ask the operator for an invite.'}
        </div>
        <p>
          <a href="/signin">Sign in</a>
        </p>
      </Page>
    );
  }
  if (made) {
    return (
      <Page title="Welcome">
        <p>
          Your account <strong>{made.account.name}</strong> is ready, with a zero balance.
        </p>
        {made.apiKey && (
          <div class="card">
            <p>Your first API key, shown only this once. Copy it now:</p>
            <pre class="secret" data-testid="first-key">
              {made.apiKey}
            </pre>
          </div>
        )}
        <button class="primary" onClick={() => (signedIn(made), navigate('/', { replace: true }))}>
          Continue to the console
        </button>
      </Page>
    );
  }
  return (
    <Page title="Sign up">
      <AuthForm
        label="Create the account"
        onSubmit={async () => setMade(await api<Session>('POST', '/api/v1/auth/signup', { email, password, accountName }, { quiet401: true }))}
      >
        <Field label="Account name" name="accountName" value={accountName} set={setAccountName} autocomplete="organization" />
        <Field label="Email" name="email" type="email" value={email} set={setEmail} autocomplete="username" />
        <NewPassword label="Password" value={password} set={setPassword} />
      </AuthForm>
      <p class="links">
        <a href="/signin">I have an account</a>
      </p>
    </Page>
  );
}

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  if (!settings().mail) {
    return (
      <Page title="Forgot password">
        <div class="alert info" role="status">
          This server sends no email: ask the operator to reset your password (<code>gengate member reset-password EMAIL</code>).
        </div>
        <p>
          <a href="/signin">Back to sign in</a>
        </p>
      </Page>
    );
  }
  return (
    <Page title="Forgot password">
      {sent ? (
        <div class="alert info" role="status">
          If {email} has an account here, a link to set a new password is on its way. It works once, for one hour.
        </div>
      ) : (
        <AuthForm
          label="Email me a link"
          onSubmit={async () => (await api('POST', '/api/v1/auth/password/forgot', { email }, { quiet401: true }), setSent(true))}
        >
          <Field label="Email" name="email" type="email" value={email} set={setEmail} autocomplete="username" />
        </AuthForm>
      )}
      <p class="links">
        <a href="/signin">Back to sign in</a>
      </p>
    </Page>
  );
}

const tokenOf = () => new URLSearchParams(location.hash.slice(1)).get('token') ?? '';

/** Said on a page opened without the token its emailed link carries. */
function NeedsToken({ from }: { from: string }) {
  return (
    <div class="alert error" role="alert">
      This page needs the link from the {from} (it ends with #token=…).
    </div>
  );
}

export function ResetPassword() {
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const token = tokenOf();
  return (
    <Page title="Set a new password">
      {!token && <NeedsToken from="email" />}
      {done ? (
        <div class="alert info" role="status">
          Your password is set and every other session ended. <a href="/signin">Sign in</a>.
        </div>
      ) : (
        <AuthForm
          label="Set the password"
          onSubmit={async () => (await api('POST', '/api/v1/auth/password/reset', { token, password }, { quiet401: true }), setDone(true))}
        >
          <NewPassword label="New password" value={password} set={setPassword} />
        </AuthForm>
      )}
    </Page>
  );
}

export function AcceptInvite() {
  const [password, setPassword] = useState('');
  const token = tokenOf();
  return (
    <Page title="Accept the invite">
      {!token && <NeedsToken from="invite" />}
      <AuthForm
        label="Join the account"
        onSubmit={async () => {
          signedIn(await api<Session>('POST', '/api/v1/auth/invites/accept', { token, password }, { quiet401: true }));
          navigate('/', { replace: true });
        }}
      >
        <NewPassword label="Choose a password" value={password} set={setPassword} />
      </AuthForm>
    </Page>
  );
}
