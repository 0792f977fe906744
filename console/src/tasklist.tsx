// A table of tasks (home's recent tasks, the tasks page): a card per row on a phone.
import type { Task } from './api.js';
import { when } from './format.js';
import { StateBadge } from './ui.js';

export function TaskTable({ tasks, caption }: { tasks: Task[]; caption: string }) {
  return (
    <table class="tasks">
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Task</th>
          <th scope="col">Model</th>
          <th scope="col">State</th>
          <th scope="col">Created</th>
          <th scope="col" class="num">
            Cost (USD)
          </th>
        </tr>
      </thead>
      <tbody>
        {tasks.map((t) => (
          <tr key={t.taskId}>
            <td data-label="Task">
              <a href={`/tasks/${encodeURIComponent(t.taskId)}`}>
                <code>{t.taskId}</code>
              </a>
            </td>
            <td data-label="Model">{t.model}</td>
            <td data-label="State">
              <StateBadge state={t.state} />
            </td>
            <td data-label="Created">{when(t.createTime)}</td>
            <td data-label="Cost (USD)" class="num">
              {t.costUsd}
              {t.refunded && <span class="badge refunded">refunded</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
