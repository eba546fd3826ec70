import { join } from 'node:path';
import type { ConfigInput } from '../../src/config/schema.js';
import type { SystemInput } from './config-file.js';

/** Where a purge test whose files are in `dir` archives: `dir`/archive. */
export const archiveDirOf = (dir: string) => join(dir, 'archive');

/**
 * A purge test's config, its SQLite store and archive in `dir`: Bob and Erin are admins, so one
 * asks and the other approves, both from this one shell (the command line otherwise refuses an
 * approval typed by the OS user who asked).
 */
export function twoAdminsPurgeConfig(dir: string, ...systems: SystemInput[]): ConfigInput {
  return {
    store: `sqlite:${dir}/queue-ops.db`,
    roles: { admin: ['U0BOB', 'U0ERIN'] },
    approvals: { cliSameOsUser: 'allow' },
    archive: { dir: archiveDirOf(dir) },
    systems,
  };
}

/**
 * A purge test's config, its SQLite store and archive in `dir`, for one admin, Bob, who may purge
 * and undo alone (no second approver: what a fault test tests is the fault, not the approval).
 */
export function purgeAloneConfig(dir: string, ...systems: SystemInput[]): ConfigInput {
  return {
    store: `sqlite:${dir}/queue-ops.db`,
    roles: { admin: ['U0BOB'] },
    policies: { purge: { role: 'admin', approvals: 0 }, undo: { role: 'admin', approvals: 0 } },
    archive: { dir: archiveDirOf(dir) },
    systems,
  };
}
