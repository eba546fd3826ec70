import type { config as englishProblems } from '../i18n/en/config.js';

/** How the schema words what it refuses: the catalog's `config` part, in one locale. */
export type ConfigProblems = typeof englishProblems;
