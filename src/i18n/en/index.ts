import { common } from './common.js';
import { errors } from './errors.js';

/**
 * The English catalog. Each area keeps its strings in its own file (status.ts, dlq.ts, …);
 * add yours here.
 */
export const en = {
  common,
  errors,
};
