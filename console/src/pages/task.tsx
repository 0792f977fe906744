// One task: param, live state, result, cost and refund, callback deliveries; cancel while not final.
import { useEffect, useState } from 'preact/hooks';
import { loadModels, type ModelEntry } from '../api.js';
import { when } from '../format.js';
import { CancelButton, TaskOutcome, useLiveTask } from '../result.js';
import { ErrorBox, Loading, Page } from '../ui.js';

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
    </Page>
  );
}
