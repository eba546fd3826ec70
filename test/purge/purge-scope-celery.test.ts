import { describe, expect, it } from 'vitest';
import { celeryPurgeShell } from '../helpers/celery-purge-shell.js';
import { publishCelery } from '../helpers/celery-worker.js';
import { jsonOf, requestOf } from '../helpers/cli-run.js';

const QUEUE = 'celery:measurement_processing';
const TARGET = `zeus/${QUEUE}`;

/** Issue 34 §1 for a Celery purge: the previewed count is the most that goes, oldest first. */
describe('a Celery purge takes at most what its preview counted', () => {
  // A Redis of its own: the test reads whole keyspaces and no other file shares its worker's DB.
  const shell = celeryPurgeShell('celery-purge-scope', QUEUE, 500);
  const { as } = shell;

  it('previews 25 waiting messages, 340 more are published, and the approval deletes the 25 oldest; 340 are reported left', async () => {
    const brokerUrl = `${shell.server.url}/0`;
    const first = await publishCelery(
      { brokerUrl },
      Array.from({ length: 25 }, (_, n) => ({ task: 'tasks.add', args: [n, 1], queue: QUEUE })),
    );
    const asked = await as('U0BOB', 'purge', TARGET, 'waiting');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toContain('25 jobs will be archived, then deleted');
    expect(pending.preview).toContain('This is exactly what will run: at most these 25 jobs');

    const later = await publishCelery(
      { brokerUrl },
      Array.from({ length: 340 }, (_, n) => ({ task: 'tasks.add', args: [1000 + n, 1], queue: QUEUE })),
    );
    const approved = await as('U0ERIN', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    expect(requestOf(approved).result).toMatchObject({ purged: 25, archived: 25, newSincePreview: 340 });
    expect(JSON.stringify(jsonOf(approved).message)).toContain(
      '340 jobs arrived after the preview and were left',
    );
    const ids = (await shell.redis.lrange(QUEUE, 0, -1)).map(
      (m) => (JSON.parse(m) as { headers: { id: string } }).headers.id,
    );
    expect(ids.sort()).toEqual([...later.ids].sort());
    expect(ids.some((id) => first.ids.includes(id))).toBe(false);
  }, 120_000);
});
