import { approvals } from './approvals.js';
import { common } from './common.js';
import { errors } from './errors.js';
import { guards } from './guards.js';
import { slack } from './slack.js';

/**
 * The English catalog. Each area keeps its strings in its own file (status.ts, dlq.ts, …);
 * add yours here.
 */
export const en = {
  approvals,
  common,
  errors,
  guards,
  slack,
};
