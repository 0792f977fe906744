// A task's outcome: the live state, the result as image, video or two audio players, last frame, cost, refund; cancel.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Task } from './api.js';
import { seconds } from './format.js';
import { ErrorBox, FINAL, StateBadge, useAction } from './ui.js';

const STEPS = ['waiting', 'queuing', 'generating'] as const;

/** The result's URLs whatever the dialect: {resultUrls} as text, or the video object. */
export function resultUrls(task: Task): { urls: string[]; videos: string[] } {
  let r: unknown = task.resultJson;
  if (typeof r === 'string') {
    try {
      r = JSON.parse(r);
    } catch {
      r = null;
    }
  }
  const shown = (r && typeof r === 'object' ? r : {}) as { resultUrls?: string[]; videos?: { url: string }[] };
  return { urls: shown.resultUrls ?? [], videos: (shown.videos ?? []).map((v) => v.url) };
}

/** Polls recordInfo until the task is final (once a second): the state walks on screen without a refresh. */
export function useLiveTask(taskId: string | null, generation = 0): { task: Task | null; error: unknown } {
  const [task, setTask] = useState<Task | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!taskId) return;
    let stop = false;
    let timer = 0;
    if (generation === 0) setTask(null);
    setError(null);
    const tick = async () => {
      try {
        const t = await api<Task>('GET', `/api/v1/jobs/recordInfo?taskId=${encodeURIComponent(taskId)}`);
        if (stop) return;
        setTask(t);
        if (!FINAL.includes(t.state)) timer = window.setTimeout(tick, 1000);
      } catch (e) {
        if (stop) return;
        setError(e);
        if (!(e instanceof ApiError) || e.status === 0 || e.status >= 500) timer = window.setTimeout(tick, 3000);
      }
    };
    void tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [taskId, generation]);
  return { task, error };
}

export function Steps({ task }: { task: Task }) {
  const at = FINAL.includes(task.state) ? STEPS.length : STEPS.indexOf(task.state as (typeof STEPS)[number]);
  return (
    <ol class="steps" aria-label="Progress">
      {STEPS.map((s, i) => (
        <li key={s} class={i < at ? 'done' : i === at ? 'now' : ''} aria-current={i === at ? 'step' : undefined}>
          {s}
        </li>
      ))}
      <li class={FINAL.includes(task.state) ? `done ${task.state}` : ''} aria-current={FINAL.includes(task.state) ? 'step' : undefined}>
        {task.state === 'fail' ? 'failed' : 'done'}
      </li>
    </ol>
  );
}

export function CancelButton({ task, onCancelled }: { task: Task; onCancelled: () => void }) {
  const { busy, error, run } = useAction();
  if (FINAL.includes(task.state)) return null;
  const cancel = () =>
    run(async () => {
      await api('POST', '/api/v1/jobs/cancel', { taskId: task.taskId });
      onCancelled();
    });
  return (
    <div>
      <button class="danger" onClick={cancel} disabled={busy}>
        {busy ? 'Cancelling…' : 'Cancel task'}
      </button>
      <ErrorBox error={error} title="Not cancelled" />
    </div>
  );
}

/** The outcome of a task of a model of `kind` (image, video, music). */
export function TaskOutcome({ task, kind }: { task: Task; kind: 'image' | 'video' | 'music' | undefined }) {
  const { urls, videos } = resultUrls(task);
  const media = kind === 'video' ? (videos.length ? videos : urls) : urls;
  return (
    <div class="outcome" aria-live="polite">
      <p>
        <StateBadge state={task.state} /> {!FINAL.includes(task.state) && task.progress > 0 && <span>{Math.round(task.progress)}%</span>}
      </p>
      <Steps task={task} />
      {task.state === 'fail' && (
        <div class="alert error" role="alert">
          <strong>Failed{task.failCode !== '' ? ` (${task.failCode})` : ''}:</strong> {task.failMsg || task.error?.message || 'no reason given'}
        </div>
      )}
      {task.state === 'success' && task.filesExpired && <p class="muted">The result files have expired.</p>}
      {task.state === 'success' && !task.filesExpired && (
        <div class="media">
          {kind === 'image' && media.map((u, i) => <img key={u} src={u} alt={`Result image ${i + 1} of task ${task.taskId}`} />)}
          {kind === 'video' &&
            media.map((u, i) => (
              <video key={u} src={u} controls preload="metadata" aria-label={`Result video ${i + 1}`}>
                <track kind="captions" />
              </video>
            ))}
          {kind === 'music' &&
            media.map((u, i) => (
              <figure key={u}>
                <figcaption>Track {i + 1}</figcaption>
                <audio src={u} controls preload="none" aria-label={`Result track ${i + 1}`} />
              </figure>
            ))}
          {!kind &&
            media.map((u) => (
              <a key={u} href={u}>
                {u}
              </a>
            ))}
          {task.lastFrameUrl && (
            <figure>
              <figcaption>Last frame</figcaption>
              <img src={task.lastFrameUrl} alt={`Last frame of task ${task.taskId}`} />
            </figure>
          )}
        </div>
      )}
      <dl class="facts">
        <dt>Cost</dt>
        <dd data-testid="cost">{task.costUsd} USD</dd>
        <dt>Refund</dt>
        <dd data-testid="refund">{task.refunded ? `refunded in full (${task.costUsd} USD back to the balance)` : FINAL.includes(task.state) ? 'none' : '—'}</dd>
        <dt>Time</dt>
        <dd>{seconds(task.costTime)}</dd>
      </dl>
    </div>
  );
}
