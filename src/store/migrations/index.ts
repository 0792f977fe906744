import type { Kysely } from 'kysely';
import type { Dialect } from '../db.js';
import * as m001 from './001_foundation.js';
import * as m002 from './002_tasks.js';
import * as m003 from './003_rate_limits.js';
import * as m004 from './004_callbacks_models.js';
import * as m005 from './005_upstream_routes.js';
import * as m006 from './006_active_due.js';
import * as m007 from './007_partial_task_indexes.js';
import * as m008 from './008_dialect.js';
import * as m009 from './009_task_origin.js';
import * as m010 from './010_members.js';
import * as m011 from './011_key_budgets.js';
import * as m012 from './012_topups.js';
import * as m013 from './013_key_makers.js';
import * as m014 from './014_usage_indexes.js';
import * as m015 from './015_alerts_webhooks.js';
import * as m016 from './016_oauth.js';
import * as m017 from './017_dashboard_indexes.js';
import * as m018 from './018_key_spend_kept.js';
import * as m019 from './019_oauth_open_codes.js';
import * as m020 from './020_topup_fees.js';
import * as m021 from './021_task_trace.js';
import * as m023 from './023_model_definitions.js';

export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<any>, dialect: Dialect): Promise<void>;
}

/** Every migration in order. Add a numbered file and a line here; never edit a released one. */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: 'foundation', up: m001.up },
  { version: 2, name: 'tasks', up: m002.up },
  { version: 3, name: 'rate limits', up: m003.up },
  { version: 4, name: 'callback leases and model switches', up: m004.up },
  { version: 5, name: 'upstream routes', up: m005.up },
  { version: 6, name: 'index of active tasks by due time', up: m006.up },
  { version: 7, name: 'partial task indexes', up: m007.up },
  { version: 8, name: 'kie dialect of accounts and tasks', up: m008.up },
  { version: 9, name: 'task origin', up: m009.up },
  { version: 10, name: 'members and sign-in', up: m010.up },
  { version: 11, name: 'key names, expiry and budgets; the key of each charge', up: m011.up },
  { version: 12, name: 'card top-ups', up: m012.up },
  { version: 13, name: 'who made each key', up: m013.up },
  { version: 14, name: 'usage and money report indexes; the model and source of ledger entries', up: m014.up },
  { version: 15, name: 'low-balance alerts, account events, webhook attempts, previous webhook secret', up: m015.up },
  { version: 16, name: 'OAuth clients, grants and tokens for MCP', up: m016.up },
  { version: 17, name: 'dashboard time indexes of tasks and webhook attempts', up: m017.up },
  { version: 18, name: 'key spend counters only for accounts that use them', up: m018.up },
  { version: 19, name: 'open OAuth authorization codes by expiry', up: m019.up },
  { version: 20, name: "Stripe's fee and net of card top-ups", up: m020.up },
  { version: 21, name: 'trace of the creating request', up: m021.up },
  // 022 comes from another branch; it goes before this line when both are merged.
  { version: 23, name: 'model definitions kept in the database, with their versions; the version of each task', up: m023.up },
];
