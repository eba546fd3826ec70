import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestMessage } from '../../src/approvals/blocks.js';
import { createApprovals } from '../../src/approvals/service.js';
import { createAudit } from '../../src/audit/audit.js';
import { ActionId, wordsForAction } from '../../src/blocks/action-ids.js';
import { validateMessage } from '../../src/blocks/validate.js';
import { requestReply } from '../../src/commands/actions.js';
import { ErrorCode, OpsError } from '../../src/errors.js';
import type { CommandContext, Request } from '../../src/pipeline/types.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { ActionRequest, Store } from '../../src/store/store.js';
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
          restart: { role: 'operator', approvals: 1 },
          purge: { role: 'admin', approvals: 1 },
          revoke: { role: 'operator', approvals: 0 },
          fail: { role: 'operator', approvals: 0 },
          undo: { role: 'admin', approvals: 1 },
          'expire-results': { role: 'admin', approvals: 1 },
          'rate-limit': { role: 'operator', approvals: 1 },
          concurrency: { role: 'operator', approvals: 1 },
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
          restart: { role: 'operator', approvals: 1 },
          purge: { role: 'admin', approvals: 1 },
          revoke: { role: 'operator', approvals: 0 },
          fail: { role: 'operator', approvals: 0 },
          undo: { role: 'admin', approvals: 1 },
          'expire-results': { role: 'admin', approvals: 1 },
          'rate-limit': { role: 'operator', approvals: 1 },
          concurrency: { role: 'operator', approvals: 1 },
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

describe('the message of a done purge', () => {
  const purge = (status: ActionRequest['status'], result?: Record<string, unknown>): ActionRequest => ({
    id: 'r-purge001',
    action: 'purge',
    target: 'pushizo/dispatch-ios',
    params: { system: 'pushizo', queue: 'dispatch-ios', state: 'failed' },
    status,
    requestedBy: 'U0BOB',
    via: 'slack',
    channel: 'C0INCIDENT',
    requiredApprovals: 1,
    approvals: [{ userId: 'U0CAROL', at: '2030-01-01T10:00:00.000Z' }],
    preview: 'purge pushizo/dispatch-ios (failed): 16 jobs',
    createdAt: '2030-01-01T10:00:00.000Z',
    expiresAt: '2030-01-01T10:15:00.000Z',
    updatedAt: '2030-01-01T10:00:01.000Z',
    ...(result ? { result } : {}),
  });
  const buttons = (message: { blocks: unknown[] }) =>
    message.blocks
      .filter((b) => (b as { type: string }).type === 'actions')
      .flatMap((b) => (b as { elements: { action_id: string; value: string }[] }).elements);

  it('offers its undo as a button whose click is `undo <purge id>`, and only once it is done', () => {
    const done = requestMessage(
      purge('done', { purged: 16, archived: 16, archivePath: '/tmp/a', purgeId: 'r-purge001' }),
      'en',
    );
    expect(validateMessage(done)).toEqual([]);
    const [undo, ...others] = buttons(done);
    expect(others).toEqual([]);
    expect(undo).toMatchObject({
      action_id: ActionId.PurgeUndo,
      value: 'r-purge001',
      text: { text: 'Undo this purge' },
    });
    expect(wordsForAction(undo!.action_id, undo!.value)).toEqual(['undo', 'r-purge001']);
    expect(buttons(requestMessage(purge('pending'), 'en')).map((b) => b.action_id)).toEqual([
      ActionId.Approve,
      ActionId.Deny,
    ]);
    expect(buttons(requestMessage(purge('failed'), 'en'))).toEqual([]);
  });
});
