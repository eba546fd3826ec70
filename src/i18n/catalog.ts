import type { en } from './en/index.js';

/**
 * The shape every locale's strings have: English's. Apart from `index.ts`, which imports every
 * locale, so that a locale's folder is typed against it without an import cycle.
 */
export type Catalog = typeof en;
