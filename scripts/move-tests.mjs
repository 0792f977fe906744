// One-off (issue 31, item 4): moves test files so test/ mirrors src/, with `git mv`, and rewrites the
// relative imports that the moves break (in moved files and in files importing them) and the plain
// mentions of the old paths in the repository's text files. Idempotent: a move whose source is gone
// is left out, so it can be run again after merging work that added or changed tests.
// Run from the repository root: node scripts/move-tests.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const MOVES = {
  'test/admin/dashboard-plans.test.ts': 'test/dashboard/dashboard-plans.test.ts',
  'test/admin/operator-views.test.ts': 'test/api/operator-views.test.ts',
  'test/foundation/admin.test.ts': 'test/api/admin.test.ts',
  'test/foundation/auth.test.ts': 'test/api/auth.test.ts',
  'test/foundation/batched.test.ts': 'test/store/batched.test.ts',
  'test/foundation/checkpoint.test.ts': 'test/store/checkpoint.test.ts',
  'test/foundation/cli-database.test.ts': 'test/cli/cli-database.test.ts',
  'test/foundation/cli.test.ts': 'test/cli/cli.test.ts',
  'test/foundation/connection-flood.test.ts': 'test/http/connection-flood.test.ts',
  'test/foundation/cors.test.ts': 'test/http/cors.test.ts',
  'test/foundation/group-commit.test.ts': 'test/store/group-commit.test.ts',
  'test/foundation/guards.test.ts': 'test/store/guards.test.ts',
  'test/foundation/hostile-input.test.ts': 'test/http/hostile-input.test.ts',
  'test/foundation/hostile-small.test.ts': 'test/http/hostile-small.test.ts',
  'test/foundation/http.test.ts': 'test/http/http.test.ts',
  'test/foundation/ids.test.ts': 'test/ids.test.ts',
  'test/foundation/layers.test.ts': 'test/lint/layers.test.ts',
  'test/foundation/ledger.test.ts': 'test/billing/ledger.test.ts',
  'test/foundation/log-sink.test.ts': 'test/http/log-sink.test.ts',
  'test/foundation/logs.test.ts': 'test/http/logs.test.ts',
  'test/foundation/money.test.ts': 'test/billing/money.test.ts',
  'test/foundation/pg-pool.test.ts': 'test/store/pg-pool.test.ts',
  'test/foundation/prepared.test.ts': 'test/store/prepared.test.ts',
  'test/foundation/shown.test.ts': 'test/shown.test.ts',
  'test/foundation/slow-clients.test.ts': 'test/http/slow-clients.test.ts',
  'test/foundation/slow-readers.test.ts': 'test/http/slow-readers.test.ts',
  'test/foundation/sqlite-reader.test.ts': 'test/store/sqlite-reader.test.ts',
  'test/models/switches.test.ts': 'test/catalog/switches.test.ts',
  'test/tasks/breaker.test.ts': 'test/engine/breaker.test.ts',
  'test/tasks/claim.test.ts': 'test/engine/claim.test.ts',
  'test/tasks/crash.test.ts': 'test/engine/crash.test.ts',
  'test/tasks/failures.test.ts': 'test/engine/failures.test.ts',
  'test/tasks/fallback-poll.test.ts': 'test/engine/fallback-poll.test.ts',
  'test/tasks/finish-statements.test.ts': 'test/engine/finish-statements.test.ts',
  'test/tasks/in-flight.test.ts': 'test/engine/in-flight.test.ts',
  'test/tasks/leases.test.ts': 'test/engine/leases.test.ts',
  'test/tasks/notify.test.ts': 'test/engine/notify.test.ts',
  'test/tasks/routes.test.ts': 'test/engine/routes.test.ts',
  'test/tasks/schedule.test.ts': 'test/engine/schedule.test.ts',
};

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' });
const moves = new Map(Object.entries(MOVES).filter(([from]) => existsSync(from)));
const tracked = git('ls-files').split('\n').filter(Boolean);
const code = tracked.filter((f) => /^(test|bench|scripts)\/.*\.(ts|mts|js|mjs)$/.test(f) && f !== 'scripts/move-tests.mjs');
const text = tracked.filter((f) => /\.(md|ts|mts|js|mjs|json|ya?ml)$/.test(f) && f !== 'scripts/move-tests.mjs' && !f.endsWith('package-lock.json'));

// Relative specifiers in import/export ... from '...', import('...') and vi.mock('...').
const SPEC = /((?:from|import|mock)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)(['"])/g;
const rewritten = new Map();
for (const file of code) {
  const before = readFileSync(file, 'utf8');
  const dest = moves.get(file) ?? file;
  const after = before.replace(SPEC, (whole, pre, spec, post) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const asTs = target.replace(/\.js$/, '.ts');
    const moved = moves.get(asTs) ?? moves.get(target);
    const newTarget = moved ? (target.endsWith('.js') ? moved.replace(/\.ts$/, '.js') : moved) : target;
    let rel = path.posix.relative(path.posix.dirname(dest), newTarget);
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return rel === spec ? whole : `${pre}${rel}${post}`;
  });
  if (after !== before) rewritten.set(dest, after);
}
for (const [from, to] of moves) {
  mkdirSync(path.dirname(to), { recursive: true });
  git('mv', from, to);
}
for (const [file, content] of rewritten) writeFileSync(file, content);
// Plain mentions of a moved file's path (docs, comments, the tools list).
for (const file of text) {
  const now = moves.get(file) ?? file;
  if (!existsSync(now)) continue;
  const before = readFileSync(now, 'utf8');
  let after = before;
  for (const [from, to] of moves) after = after.split(from).join(to);
  if (after !== before) writeFileSync(now, after);
}
// Folders the moves emptied (git keeps no empty folder; the layout test would see them here).
for (const from of moves.keys()) {
  const dir = path.dirname(from);
  if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
}
console.log(`moved ${moves.size} test files; rewrote imports in ${rewritten.size} files`);
