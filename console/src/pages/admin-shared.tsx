// Operator pages, shared pieces: the admin API's shapes (docs/api.md "Admin API"), a loader, the operator's sub-navigation.
import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { useLocation } from '../router.js';
import { failed, useAction as useFormAction, useGet } from '../ui.js';

export interface Account {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  balance: string;
  balanceMicros: number;
  createdAt: string;
  dialect: 'gengate' | 'kie';
  limits?: { write: number | null; read: number | null };
}

export interface LedgerEntry {
  id: number;
  kind: 'topup' | 'charge' | 'refund' | 'partial_refund' | 'adjustment';
  amount: string;
  amountMicros: number;
  balanceAfter: string;
  taskId: string | null;
  keyId: string | null;
  reason: string;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[] | null;
  models: string[] | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface Member {
  id: string;
  email: string;
  role: 'owner' | 'member' | 'operator';
  createdAt: string;
}

export interface OperatorTask {
  taskId: string;
  accountId: string;
  model: string;
  state: 'waiting' | 'queuing' | 'generating' | 'success' | 'fail';
  createTime: number;
  updateTime: number;
  price: string;
  priceMicros: number;
  refunded: boolean;
  failCode: number | null;
  failMsg: string | null;
  backend: string;
  routeIndex: number;
  attempts: number;
  lastError: string | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  deadlineAt: number;
  stuck: boolean;
  leased: boolean;
  failedOver: boolean;
}

/** Why an admin call failed, in words an operator can act on (404 on every admin path: the admin API is off). */
export function adminProblem(error: unknown): unknown {
  if (error instanceof ApiError && error.status === 404 && /^no route /.test(error.message))
    return new Error('the admin API is off on this server: set ADMIN_TOKEN (decision 2002) and restart GenGate');
  if (error instanceof ApiError && error.status === 403) return new Error(`${error.message}. Operator pages need a member with the operator role.`);
  return error;
}

/** GET an admin endpoint; `reload` reads it again (after a change). */
export function useAdmin<T>(path: string | null): { data: T | null; error: unknown; reload: () => void } {
  const [tick, setTick] = useState(0);
  const { data, error } = useGet<T>(path, tick, adminProblem);
  return { data, error, reload: () => setTick((n) => n + 1) };
}

const SECTIONS: [string, string][] = [
  ['/admin', 'Dashboard'],
  ['/admin/accounts', 'Accounts'],
  ['/admin/tasks', 'All tasks'],
  ['/admin/models', 'Models'],
  ['/admin/definitions', 'Definitions'],
  ['/admin/report', 'Money'],
];

export function AdminNav() {
  const loc = useLocation();
  return (
    <nav class="subnav" aria-label="Operator">
      <ul>
        {SECTIONS.map(([href, label]) => {
          const current = href === '/admin' ? loc.pathname === '/admin' : loc.pathname.startsWith(href);
          return (
            <li key={href}>
              <a href={href} aria-current={current ? 'page' : undefined}>
                {label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** Sends a change and reports it: `ok` names what was done, or the server's words are in `error`. */
export function useAction(): { busy: boolean; error: unknown; ok: string; run<T>(label: string, call: () => Promise<T>): Promise<T | null> } {
  const action = useFormAction(adminProblem);
  const [ok, setOk] = useState('');
  return {
    busy: action.busy,
    error: action.error,
    ok,
    async run(label, call) {
      setOk('');
      const answer = await action.run(call);
      if (answer === failed) return null;
      setOk(label);
      return answer;
    },
  };
}
