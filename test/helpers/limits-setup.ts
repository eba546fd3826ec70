import { join } from 'node:path';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { Request } from '../../src/pipeline/types.js';
import { bullmqSystem, configYaml } from './config-file.js';

/**
 * The limits tests' system: BullMQ `pushizo` with one queue, `sends`, on a SQLite store in `dir`
 * that every process of a test shares, where U0ALICE (operator) sets limits without an approval.
 */
export function limitsConfig(redisUrl: string, prefix: string, dir: string): Config {
  return parseConfig(
    configYaml({
      systems: [bullmqSystem('pushizo', redisUrl, prefix, { queues: ['sends'] })],
      store: `sqlite:${join(dir, 'store.db')}`,
      roles: { viewer: ['*'], operator: ['U0ALICE'] },
      policies: { concurrency: { role: 'operator', approvals: 0 } },
    }),
    {},
  );
}

/** A command typed by U0ALICE on the command line. */
export const asAlice = (...words: string[]): Request => ({
  actor: { id: 'U0ALICE' },
  via: 'cli',
  words,
  locale: 'en',
});
