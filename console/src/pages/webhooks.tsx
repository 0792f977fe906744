// Webhooks and alerts: reveal and rotate the signing secret, send a test delivery, set the low-balance alert.
// Only GET /api/v1/account/webhook-secret, POST .../rotate, POST /api/v1/account/webhooks/test, GET/PUT /api/v1/account/alert (decision 1905).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { when } from '../format.js';
import { ErrorBox, Loading, Page, useAction } from '../ui.js';

interface Secrets {
  secret: string;
  previous: { secret: string; validUntil: string } | null;
}

export interface Attempt {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  at: number;
  webhookId: string;
}

interface Alert {
  level: string | null;
  url: string | null;
  email: boolean;
  armed: boolean;
}

function Secret() {
  const [secrets, setSecrets] = useState<Secrets | null>(null);
  const { busy, error, run } = useAction();
  const [rotated, setRotated] = useState(false);
  const call = (fn: () => Promise<Secrets>, after: boolean) => () =>
    run(async () => {
      setSecrets(await fn());
      setRotated(after);
    });
  const reveal = call(() => api<Secrets>('GET', '/api/v1/account/webhook-secret'), false);
  const rotate = call(() => api<Secrets>('POST', '/api/v1/account/webhook-secret/rotate'), true);
  return (
    <section class="card" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p class="muted">
        Every callback and account event is signed with this secret (<code>webhook-signature</code>). Rotating makes a new one; the old one still signs for 24
        hours, so receivers can switch without losing a delivery.
      </p>
      <ErrorBox error={error} title="Not done" />
      {rotated && (
        <p role="status" class="alert info">
          A new secret was made.
        </p>
      )}
      {secrets && (
        <dl class="facts">
          <dt>Secret</dt>
          <dd>
            <code data-testid="webhook-secret">{secrets.secret}</code>
          </dd>
          {secrets.previous && (
            <>
              <dt>Previous</dt>
              <dd>
                <code data-testid="previous-secret">{secrets.previous.secret}</code> (signs too until {when(Date.parse(secrets.previous.validUntil))})
              </dd>
            </>
          )}
        </dl>
      )}
      <div class="row">
        {!secrets && (
          <button onClick={reveal} disabled={busy}>
            Reveal the secret
          </button>
        )}
        {secrets && (
          <button onClick={() => setSecrets(null)} disabled={busy}>
            Hide the secret
          </button>
        )}
        <button onClick={rotate} disabled={busy}>
          Rotate the secret
        </button>
      </div>
    </section>
  );
}

function TestDelivery() {
  const [url, setUrl] = useState('');
  const { busy, error, run } = useAction();
  const [attempt, setAttempt] = useState<Attempt | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    setAttempt(null);
    void run(async () => setAttempt(await api<Attempt>('POST', '/api/v1/account/webhooks/test', { url })));
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="test-title">
      <h2 id="test-title">Test delivery</h2>
      <p class="muted">
        Sends one signed <code>webhook.test</code> event to the address, now.
      </p>
      <ErrorBox error={error} title="Not sent" />
      <div class="field">
        <label for="w-url">Receiver URL</label>
        <input
          id="w-url"
          type="url"
          required
          placeholder="https://example.com/hooks/gengate"
          value={url}
          onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
        />
      </div>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Sending…' : 'Send a test event'}
      </button>
      {attempt && (
        <p role="status" class={`alert ${attempt.ok ? 'info' : 'error'}`} data-testid="test-result">
          {attempt.ok ? 'Delivered' : 'Not delivered'}: {attempt.statusCode ? `HTTP ${attempt.statusCode}` : (attempt.error ?? 'no answer')} in{' '}
          {attempt.durationMs} ms (webhook-id <code>{attempt.webhookId}</code>).
        </p>
      )}
    </form>
  );
}

function LowBalanceAlert() {
  const [alert, setAlert] = useState<Alert | null>(null);
  const [level, setLevel] = useState('');
  const [url, setUrl] = useState('');
  const [email, setEmail] = useState(false);
  const [saved, setSaved] = useState(false);
  const { busy, error, setError, run } = useAction();
  const show = (a: Alert) => {
    setAlert(a);
    setLevel(a.level ?? '');
    setUrl(a.url ?? '');
    setEmail(a.email);
  };
  useEffect(() => void api<Alert>('GET', '/api/v1/account/alert').then(show, setError), []);
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void run(async () => {
      show(await api<Alert>('PUT', '/api/v1/account/alert', { level: level.trim() || null, url: url.trim() || null, email }));
      setSaved(true);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="alert-title">
      <h2 id="alert-title">Low-balance alert</h2>
      <p class="muted">
        When a charge takes the balance below the level, one signed <code>balance.low</code> webhook goes to the URL and, when the server sends mail, one email
        to the owners; the next only after the balance is back at or above the level.
      </p>
      <ErrorBox error={error} title="Not saved" />
      {!alert && !error && <Loading what="the alert" />}
      {alert && (
        <p data-testid="alert-state">
          {alert.level ? `On at ${alert.level} USD, ${alert.armed ? 'armed (the next fall below it alerts)' : 'sent (re-arms at the level)'}.` : 'Off.'}
        </p>
      )}
      <div class="filters">
        <div class="field">
          <label for="a-level">Level in USD (empty: off)</label>
          <input id="a-level" inputMode="decimal" value={level} onInput={(e) => setLevel((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="a-url">Webhook URL (empty: none)</label>
          <input id="a-url" type="url" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} />
        </div>
        <label class="choice">
          <input type="checkbox" checked={email} onChange={() => setEmail(!email)} /> Email the owners
        </label>
      </div>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Save the alert'}
      </button>
      {saved && (
        <p role="status" class="muted">
          Saved.
        </p>
      )}
    </form>
  );
}

export function Webhooks() {
  return (
    <Page title="Webhooks and alerts">
      <Secret />
      <TestDelivery />
      <LowBalanceAlert />
      <p class="muted">
        A task's callback deliveries, and redelivery, are on its page (<a href="/tasks">Tasks</a>).
      </p>
    </Page>
  );
}
