import type { Catalog } from '../catalog.js';
import { actions } from './actions.js';
import { approvals } from './approvals.js';
import { audit } from './audit.js';
import { cli } from './cli.js';
import { commands } from './commands.js';
import { common } from './common.js';
import { config } from './config.js';
import { demo } from './demo.js';
import { dlq } from './dlq.js';
import { errors } from './errors.js';
import { escalation } from './escalation.js';
import { filters } from './filters.js';
import { guards } from './guards.js';
import { help } from './help.js';
import { home } from './home.js';
import { job } from './job.js';
import { limits } from './limits.js';
import { purge } from './purge.js';
import { queueContext } from './queue-context.js';
import { redis } from './redis.js';
import { restart } from './restart.js';
import { results } from './results.js';
import { scale } from './scale.js';
import { slack } from './slack.js';
import { status } from './status.js';
import { throughput } from './throughput.js';
import { timeline } from './timeline.js';
import { trend } from './trend.js';
import { why } from './why.js';
import { workers } from './workers.js';

/**
 * The Turkish catalog: one file per English one, each typed as its part of `Catalog`, so a key
 * added in English and not here stops tsc (and test/i18n/catalogs.test.ts). Written the way the
 * teams' runbooks write (kuyruk, bekleyen, başarısız, onay, worker); command words stay English.
 */
export const tr: Catalog = {
  actions,
  approvals,
  audit,
  cli,
  commands,
  config,
  common,
  demo,
  dlq,
  errors,
  escalation,
  filters,
  guards,
  help,
  home,
  job,
  limits,
  scale,
  purge,
  queueContext,
  redis,
  restart,
  results,
  slack,
  status,
  throughput,
  timeline,
  trend,
  why,
  workers,
};
