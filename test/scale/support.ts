import type { ChildProcess } from 'node:child_process';
import { spawnServe, stop } from '../helpers/cli.js';

/** One createTask request of the load: which account, which idempotency key, which body. */
export interface Job {
  account: number;
  key: string;
  body: { model: string; input: Record<string, unknown>; callBackUrl: string };
  /** Also sent at the same moment to another API process with the same Idempotency-Key. */
  twice: boolean;
}

/** What one createTask answer said. */
export interface Answer {
  job: Job;
  status: number;
  taskId: string | null;
  error: string | null;
}

/** The prompts of the load: most succeed, some fail after generating (501) or at hand-off (400); both must be refunded. */
export function prompt(n: number): { prompt: string; fails: boolean } {
  if (n % 10 === 3) return { prompt: 'scale gengate:fail=501', fails: true };
  if (n % 20 === 7) return { prompt: 'scale gengate:fail=400', fails: true };
  return { prompt: 'scale', fails: false };
}

/** Job `i` of the load: accounts take turns, so every account races all the time. */
export function job(i: number, accounts: number, callbackBase: string): Job {
  const a = i % accounts;
  const n = Math.floor(i / accounts);
  // Cheap images: a fixed seed and prompt, so the local backend renders each kind once and copies it after.
  const model = n % 5 === 4 ? 'nano-banana-2' : 'seedream-flash';
  const input = { prompt: prompt(n).prompt, seed: 7, output_format: 'jpeg', ...(model === 'nano-banana-2' ? { resolution: '1K' } : {}) };
  return { account: a, key: `a${a}-n${n}`, body: { model, input, callBackUrl: `${callbackBase}/cb/a${a}-n${n}` }, twice: n % 10 === 0 };
}

/** POSTs createTask as account `apiKey` to `url` with an Idempotency-Key. */
export async function createTask(url: string, apiKey: string, job: Job): Promise<Answer> {
  const res = await fetch(`${url}/api/v1/jobs/createTask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': job.key },
    body: JSON.stringify(job.body),
  });
  const body = (await res.json()) as { data?: { taskId?: string }; error?: string };
  return { job, status: res.status, taskId: body.data?.taskId ?? null, error: body.error ?? null };
}

/** Runs `work(0)`, `work(1)`, ... with `parallel` loops until `more()` says enough. */
export async function runUntil(parallel: number, work: (i: number) => Promise<void>, more: () => boolean): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (more()) await work(next++);
    }),
  );
}

/** A set of spawned `gengate serve` processes, all SIGKILLed at the end. */
export class Processes {
  readonly children: ChildProcess[] = [];

  constructor(private readonly env: Record<string, string>) {}

  /** Starts one process of `role`; returns its child and URL. */
  async start(role: 'api' | 'worker', extra: Record<string, string> = {}) {
    const p = await spawnServe({ ...this.env, ...extra }, ['--role', role]);
    this.children.push(p.child);
    return p;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.children.splice(0).map((c) => stop(c, 'SIGKILL')));
  }
}
