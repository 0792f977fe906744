// Shared pieces: page frame, states (loading, empty, error), state badges.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { TaskState } from './api.js';

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
