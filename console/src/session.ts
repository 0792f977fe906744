// The signed-in session, shared by every page (a tiny store: no library needed for one value).
import { useEffect, useState } from 'preact/hooks';
import { api, setCsrf, type Session } from './api.js';

type State = { status: 'loading' } | { status: 'out'; reason?: string } | { status: 'in'; session: Session };

let state: State = { status: 'loading' };
const listeners = new Set<(s: State) => void>();

function set(next: State): void {
  state = next;
  if (next.status === 'in') setCsrf(next.session.csrfToken);
  for (const l of listeners) l(next);
}

export function useSession(): State {
  const [s, setS] = useState(state);
  useEffect(() => {
    listeners.add(setS);
    setS(state);
    return () => void listeners.delete(setS);
  }, []);
  return s;
}

/** Reads the session of the cookie (GET /api/v1/auth/session); signed out when there is none. */
export async function refreshSession(): Promise<void> {
  try {
    set({ status: 'in', session: await api<Session>('GET', '/api/v1/auth/session', undefined, { quiet401: true }) });
  } catch {
    set({ status: 'out' });
  }
}

export function signedIn(session: Session): void {
  set({ status: 'in', session });
}

export function signedOut(reason?: string): void {
  setCsrf('');
  set({ status: 'out', ...(reason ? { reason } : {}) });
}
