// Shared pieces: page frame, states (loading, empty, error), state badges, copy and confirm buttons.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type TaskState } from './api.js';

/** A page: sets the document title and moves focus to the heading after navigation (screen readers hear the new page). */
export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const h1 = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · GenGate`;
    h1.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <section class="page">
      <div class="page-head">
        <h1 tabIndex={-1} ref={h1}>
          {title}
        </h1>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  if (!error) return null;
  const msg = error instanceof Error ? error.message : String(error);
  return (
    <div class="alert error" role="alert">
      <strong>{title}:</strong> {msg}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

const STATE_WORDS: Record<TaskState, string> = { waiting: 'Waiting', queuing: 'Queuing', generating: 'Generating', success: 'Success', fail: 'Failed' };

export function StateBadge({ state }: { state: TaskState }) {
  return <span class={`badge state-${state}`}>{STATE_WORDS[state] ?? state}</span>;
}

export const FINAL: TaskState[] = ['success', 'fail'];

/**
 * GETs `path` (nothing while it is null), and again each time `tick` moves; a refusal is kept in
 * `error`, through `mapError`. An answer that arrives after the path or tick moved on is dropped.
 */
export function useGet<T>(path: string | null, tick = 0, mapError: (e: unknown) => unknown = (e) => e): { data: T | null; error: unknown } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!path) return;
    let live = true;
    setError(null);
    api<T>('GET', path).then(
      (d) => live && setData(d),
      (e) => live && setError(mapError(e)),
    );
    return () => void (live = false);
  }, [path, tick]);
  return { data, error };
}

/** An action of a form or button, one at a time (see useAction). */
export interface Action {
  /** True while the action runs: its button is disabled and says so. */
  busy: boolean;
  /** Why the last run failed (the server's refusal), cleared when it runs again. */
  error: unknown;
  setError: (e: unknown) => void;
  /**
   * Runs `call`; resolves with its answer, or with `failed` when it threw (the error is in `error`).
   * `stayBusy`: on success the action stays busy, for a call that leaves the page.
   */
  run<T>(call: () => Promise<T>, opts?: { stayBusy?: boolean }): Promise<T | typeof failed>;
}

/** What `Action.run` resolves with when its call threw. */
export const failed: unique symbol = Symbol('failed');

/** The busy flag and error of every console form and button; `mapError` turns what was thrown into what is shown. */
export function useAction(mapError: (e: unknown) => unknown = (e) => e): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async <T,>(call: () => Promise<T>, opts: { stayBusy?: boolean } = {}): Promise<T | typeof failed> => {
    setBusy(true);
    setError(null);
    let ok = false;
    try {
      const answer = await call();
      ok = true;
      return answer;
    } catch (e) {
      setError(mapError(e));
      return failed;
    } finally {
      if (!(ok && opts.stayBusy)) setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/** Copies `text`; where the clipboard is refused (plain http, permissions) it selects the element `selectId` so the user can copy it. */
export function CopyButton({ text, selectId, label = 'Copy' }: { text: string; selectId: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      const el = document.getElementById(selectId);
      if (el) getSelection()?.selectAllChildren(el);
    }
  };
  return (
    <button type="button" class="secondary" onClick={copy}>
      {copied ? 'Copied' : label}
    </button>
  );
}

/**
 * A change that asks once more: `label` (`name` for screen readers: "Revoke nightly job") opens the
 * question, "`name` now" does it, `keep` goes back; a refusal is shown under it in the server's words.
 */
export function ConfirmButton({
  label,
  name,
  keep = 'Keep it',
  run,
  errorTitle,
}: {
  label: string;
  name: string;
  keep?: string;
  run: () => Promise<unknown>;
  errorTitle: string;
}) {
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const go = async () => {
    if ((await action.run(run)) !== failed) setAsking(false);
  };
  return (
    <>
      {asking ? (
        <span class="row">
          <button class="danger" onClick={go}>
            {name} now
          </button>
          <button class="link" onClick={() => setAsking(false)}>
            {keep}
          </button>
        </span>
      ) : (
        <button onClick={() => setAsking(true)} aria-label={name}>
          {label}
        </button>
      )}
      <ErrorBox error={action.error} title={errorTitle} />
    </>
  );
}
