import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApprovals } from '../../src/approvals/service.js';
import { createAudit } from '../../src/audit/audit.js';
import { requestReply } from '../../src/commands/pause.js';
import type { CommandContext, Request } from '../../src/commands/types.js';
import { ErrorCode, OpsError } from '../../src/errors.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { exitCodeOf, toCliJson } from '../../src/transports/cli/run.js';

describe('the answer to a request whose action failed', () => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'qo-approval-blocks-'));
    store = createSqliteStore(join(dir, 'store.db'));
    await store.migrate();
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says in words why the action failed, in the message and in --json, read back from the store', async () => {
    const now = () => new Date('2026-11-29T08:00:00.000Z');
    const approvals = createApprovals({
      store,
      audit: createAudit({ store, now }),
      authority: { has: async () => true, has2fa: async () => undefined },
      config: {
        policies: {
          pause: { role: 'operator', approvals: 0 },
          resume: { role: 'operator', approvals: 0 },
          retry: { role: 'operator', approvals: 0, bulkApprovals: 0 },
          scale: { role: 'operator', approvals: 1 },
          purge: { role: 'admin', approvals: 1 },
          revoke: { role: 'operator', approvals: 0 },
          fail: { role: 'operator', approvals: 0 },
          undo: { role: 'admin', approvals: 1 },
        },
        approvals: { ttlMinutes: 15, require2fa: false, cliSameOsUser: 'refuse' },
      },
      executors: {
        pause: async () => {
          throw new OpsError(ErrorCode.NoWorkersAnswered, {
            system: 'zeus',
            queue: 'celery',
            action: 'pause',
            timeoutMs: 1000,
          });
        },
      },
      now,
    });
    const submitted = await approvals.submit({
      actor: { id: 'U0ALICE', via: 'cli' },
      action: 'pause',
      target: 'zeus/celery',
      params: { system: 'zeus', queue: 'celery' },
      preview: 'pause zeus/celery',
    });
    const stored = await approvals.get(submitted.id);
    expect(stored?.status).toBe('failed');

    const asked: Request = { actor: { id: 'U0ALICE' }, via: 'cli', words: [], locale: 'en' };
    const reply = requestReply(stored!, asked, { now } as CommandContext);
    const rendered = JSON.stringify(reply.message.blocks);
    expect(rendered).toContain('No worker of `zeus` answered within 1000 ms');
    expect(rendered).not.toContain('Error: NoWorkersAnswered');

    const json = toCliJson(reply, 'en');
    expect(json.ok).toBe(false);
    expect(json.error?.code).toBe('NoWorkersAnswered');
    expect(json.error?.message).toContain('No worker of `zeus` answered');
    expect(exitCodeOf(reply)).toBe(1);
  });

  it('says the pause was sent but the queue is not paused when the outcome reports isPaused: false', async () => {
    const now = () => new Date('2026-11-29T08:00:00.000Z');
    const outcomes = [
      { queue: 'celery', isPaused: false, workersAnswered: ['celery@w1'] },
      { queue: 'celery', isPaused: true, workersAnswered: ['celery@w1'] },
    ];
    const approvals = createApprovals({
      store,
      audit: createAudit({ store, now }),
      authority: { has: async () => true, has2fa: async () => undefined },
      config: {
        policies: {
          pause: { role: 'operator', approvals: 0 },
          resume: { role: 'operator', approvals: 0 },
          retry: { role: 'operator', approvals: 0, bulkApprovals: 0 },
          scale: { role: 'operator', approvals: 1 },
          purge: { role: 'admin', approvals: 1 },
          revoke: { role: 'operator', approvals: 0 },
          fail: { role: 'operator', approvals: 0 },
          undo: { role: 'admin', approvals: 1 },
        },
        approvals: { ttlMinutes: 15, require2fa: false, cliSameOsUser: 'refuse' },
      },
      // A Celery pause whose settle wait ran out, then one that settled.
      executors: { pause: async () => ({ ...outcomes.shift()! }) },
      now,
    });
    const asked: Request = { actor: { id: 'U0ALICE' }, via: 'cli', words: [], locale: 'en' };
    const shownFor = async () => {
      const submitted = await approvals.submit({
        actor: { id: 'U0ALICE', via: 'cli' },
        action: 'pause',
        target: 'zeus/celery',
        params: { system: 'zeus', queue: 'celery' },
        preview: 'pause zeus/celery',
      });
      const stored = await approvals.get(submitted.id);
      return JSON.stringify(requestReply(stored!, asked, { now } as CommandContext).message.blocks);
    };

    const unsettled = await shownFor();
    expect(unsettled).not.toContain('zeus/celery is paused');
    expect(unsettled).toContain('the queue is not paused yet');
    expect(unsettled).toContain('/queue workers zeus');
    expect(await shownFor()).toContain('zeus/celery is paused');
  });
});
