// One task: param, live state, result, cost and refund, callback deliveries; cancel while not final.
import { useEffect, useState } from 'preact/hooks';
import { api, loadModels, type CallbackStatus, type ModelEntry, type Task } from '../api.js';
import { when } from '../format.js';
import { CancelButton, TaskOutcome, useLiveTask } from '../result.js';
import { ErrorBox, FINAL, Loading, Page, useAction } from '../ui.js';

interface LoggedAttempt {
  id: string;
  kind: 'delivery' | 'retry' | 'redeliver';
  at: number;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** The callback's delivery log (GET /api/v1/jobs/callbacks) and "Redeliver" (POST /api/v1/jobs/callbacks/redeliver) once the task is final. */
function Deliveries({ task, onChange }: { task: Task; onChange: () => void }) {
  const [log, setLog] = useState<LoggedAttempt[] | null>(null);
  const { busy, error, setError, run } = useAction();
  const [result, setResult] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const id = encodeURIComponent(task.taskId);
  useEffect(() => {
    api<{ attempts: LoggedAttempt[] }>('GET', `/api/v1/jobs/callbacks?taskId=${id}`).then((r) => setLog(r.attempts), setError);
  }, [id, tick, task.callback?.attempts, task.callback?.status]);
  const redeliver = () => {
    setResult(null);
    void run(async () => {
      const r = await api<{ repeated: boolean; attempt: LoggedAttempt; callback: CallbackStatus }>('POST', '/api/v1/jobs/callbacks/redeliver', {
        taskId: task.taskId,
      });
      const a = r.attempt;
      setResult(
        `${r.repeated ? 'Already redelivered within the last 10 s: ' : ''}${a.ok ? 'delivered' : 'not delivered'} (${a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? 'no answer')}, ${a.durationMs} ms)`,
      );
      setTick(tick + 1);
      onChange();
    });
  };
  return (
    <>
      <ErrorBox error={error} title="Not done" />
      {FINAL.includes(task.state) && (
        <p class="row">
          <button onClick={redeliver} disabled={busy}>
            {busy ? 'Sending…' : 'Redeliver the callback'}
          </button>
          {result && (
            <span role="status" data-testid="redeliver-result">
              {result}
            </span>
          )}
        </p>
      )}
      {log && log.length > 0 && (
        <table class="tasks" data-testid="deliveries">
          <caption class="sr-only">Every delivery attempt of the callback</caption>
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">When</th>
              <th scope="col">Result</th>
              <th scope="col" class="num">
                Time
              </th>
            </tr>
          </thead>
          <tbody>
            {log.map((a) => (
              <tr key={a.id}>
                <td data-label="Attempt">{a.kind}</td>
                <td data-label="When">{when(a.at)}</td>
                <td data-label="Result">{a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? '—')}</td>
                <td data-label="Time" class="num">
                  {a.durationMs} ms
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function TaskDetail({ taskId }: { taskId: string }) {
  const [tick, setTick] = useState(0);
  const { task, error } = useLiveTask(taskId, tick);
  const [models, setModels] = useState<ModelEntry[]>([]);
  useEffect(() => void loadModels().then(setModels, () => {}), []);
  if (error && !task) {
    return (
      <Page title="Task">
        <ErrorBox error={error} title="This task cannot be shown" />
        <p>
          <a href="/tasks">Back to the tasks</a>
        </p>
      </Page>
    );
  }
  if (!task) return <Loading what={`task ${taskId}`} />;
  const kind = models.find((m) => m.id === task.model)?.kind;
  const cb = task.callback;
  return (
    <Page title={`Task ${task.taskId}`} actions={<CancelButton task={task} onCancelled={() => setTick(tick + 1)} />}>
      <p class="muted">
        {task.model} · created {when(task.createTime)}
        {task.completeTime ? ` · finished ${when(task.completeTime)}` : ''}
      </p>
      <TaskOutcome task={task} kind={kind} />
      <h2>Request</h2>
      <pre class="code" tabIndex={0} aria-label="The createTask body as sent">
        {pretty(task.param)}
      </pre>
      <h2>Callback</h2>
      {!cb ? (
        <p class="muted">No callBackUrl was given for this task.</p>
      ) : (
        <dl class="facts">
          <dt>URL</dt>
          <dd>
            <code>{cb.url}</code>
          </dd>
          <dt>Delivery</dt>
          <dd>{cb.status}</dd>
          <dt>Attempts</dt>
          <dd>{cb.attempts}</dd>
          <dt>Last attempt</dt>
          <dd>
            {when(cb.lastAttemptAt)}
            {cb.lastStatusCode ? ` (HTTP ${cb.lastStatusCode})` : ''}
          </dd>
          {cb.lastError && (
            <>
              <dt>Last error</dt>
              <dd>{cb.lastError}</dd>
            </>
          )}
          <dt>Delivered</dt>
          <dd>{when(cb.deliveredAt)}</dd>
        </dl>
      )}
      {cb && <Deliveries task={task} onChange={() => setTick(tick + 1)} />}
    </Page>
  );
}
