import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite.js';
import { runCli } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';

/**
 * The SQLite store holds the audit trail, the requests and their previews: it is created readable
 * by its owner only (0600, its directory 0700), as the archives are, and so are its `-wal` and
 * `-shm` files, whatever the umask lets through (0022 gave 0644).
 */
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('the SQLite store’s file modes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'qo-store-mode-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the database, its -wal and -shm 0600 and a missing directory 0700', async () => {
    const path = join(dir, 'state', 'queue-ops.db');
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      // The WAL and its index exist while the store is open and has written.
      expect(existsSync(`${path}-wal`)).toBe(true);
      expect(existsSync(`${path}-shm`)).toBe(true);
      expect({
        db: modeOf(path),
        wal: modeOf(`${path}-wal`),
        shm: modeOf(`${path}-shm`),
        dir: modeOf(join(dir, 'state')),
      }).toEqual({ db: '600', wal: '600', shm: '600', dir: '700' });
    } finally {
      await store.close();
    }
  });

  it('leaves the mode of a store file that already exists alone', async () => {
    const path = join(dir, 'queue-ops.db');
    writeFileSync(path, '');
    chmodSync(path, 0o640);
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      expect(modeOf(path)).toBe('640');
    } finally {
      await store.close();
    }
  });

  it('is created 0600 by the command line’s first run', async () => {
    const path = join(dir, 'queue-ops.db');
    const config = writeConfigFile(dir, {
      store: `sqlite:${path}`,
      systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1', undefined, { queues: ['mail'] })],
    });
    const run = await runCli(['--config', config, 'audit']);
    expect(run.code, run.stderr).toBe(0);
    expect(modeOf(path)).toBe('600');
  });
});
