import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ArchiveManifest,
  createArchiveDir,
  writeChunk,
  writeManifest,
} from '../../src/archive/archive.js';
import { createAudit } from '../../src/audit/audit.js';
import { createBackendRegistry } from '../../src/backends/registry.js';
import { createPurges } from '../../src/purge/service.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';

describe('archive retention', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-retention-'));
    store = createSqliteStore(join(dir, 'q.db'));
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function archiveAt(id: string, finishedAt: string) {
    const path = join(dir, 'archive', id);
    await createArchiveDir(path);
    const file = await writeChunk(path, 1, ['{"id":"1"}']);
    const manifest: ArchiveManifest = {
      version: 1,
      purgeId: id,
      system: 'hs',
      type: 'bullmq',
      queue: 'events',
      states: ['waiting'],
      createdAt: finishedAt,
      finishedAt,
      files: [{ ...file, purged: 1, skipped: [] }],
      counts: { archived: 1, purged: 1, skipped: 0 },
    };
    await writeManifest(path, manifest);
    await store.createPurge({
      id,
      system: 'hs',
      queue: 'events',
      backend: 'bullmq',
      states: ['waiting'],
      state: 'done',
      archivePath: path,
      total: 1,
      chunks: 1,
      archived: 1,
      purged: 1,
      createdAt: finishedAt,
      updatedAt: finishedAt,
      finishedAt,
    });
    return path;
  }

  it('removes archives older than retentionDays once a day, audits it, and undo then says the archive is gone', async () => {
    let now = new Date('2030-01-10T12:00:00.000Z');
    const purges = createPurges({
      store,
      audit: createAudit({ store, now: () => now }),
      config: { archive: { dir: join(dir, 'archive'), retentionDays: 7 } },
      backends: () => createBackendRegistry([]),
      now: () => now,
    });
    const old = await archiveAt('r-old', '2030-01-01T00:00:00.000Z');
    const recent = await archiveAt('r-new', '2030-01-08T00:00:00.000Z');

    expect(await purges.sweepRetention()).toEqual(['r-old']);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    const [entry] = await store.listAudit({ newestFirst: true, limit: 1 });
    expect(entry).toMatchObject({
      action: 'archive.retention',
      outcome: 'ok',
      params: { removed: ['r-old'] },
    });
    await expect(purges.undoable('r-old')).rejects.toMatchObject({ code: 'NotUndoable' });

    // Later the same day nothing runs; a day later the next archive has aged out.
    now = new Date('2030-01-10T18:00:00.000Z');
    expect(await purges.sweepRetention()).toBeUndefined();
    now = new Date('2030-01-16T00:00:01.000Z');
    expect(await purges.sweepRetention()).toEqual(['r-new']);
  });
});
