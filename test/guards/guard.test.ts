import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApprovals } from '../../src/approvals/service.js';
import { createAudit } from '../../src/audit/audit.js';
import { configSchema } from '../../src/config/schema.js';
import { createAuthority } from '../../src/guards/guard.js';
import { createRoleResolver } from '../../src/guards/roles.js';
import { createOfflineDirectory, createSlackDirectory } from '../../src/guards/slack-directory.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { blockNetwork, restoreNetwork, serveUsergroup, serveUserInfo, slackClient } from './slack-api.js';

const config = configSchema.parse({
  slack: { allowedChannels: ['C0INCIDENT'] },
  roles: { viewer: ['*'], operator: ['U0ALICE', 'S0ONCALL'], admin: ['U0BOB', 'U0ANN'] },
  approvals: { ttlMinutes: 15, require2fa: true },
  systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
});

describe('the Slack-backed authority the approvals service asks', () => {
  beforeEach(blockNetwork);
  afterEach(restoreNetwork);

  it('the authority never asks Slack about a command-line actor’s 2FA and treats it as unknown', async () => {
    const authority = createAuthority({
      roles: createRoleResolver({ roles: config.roles, directory: createOfflineDirectory(), now: Date.now }),
      directory: createSlackDirectory(slackClient()),
    });
    // Slack would say true if asked; only a Slack user id is ever asked.
    const calls = serveUserInfo('cli:bob', true);
    expect(await authority.has2fa('cli:bob')).toBeUndefined();
    expect(calls.count).toBe(0);
  });
});

describe('approvals with the guards’ authority', () => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    blockNetwork();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-guard-approvals-'));
    store = createSqliteStore(join(dir, 'bot.db'));
    await store.migrate();
  });

  afterEach(async () => {
    restoreNetwork();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an approver who left the on-call group since the request was made is refused at the moment of approving', async () => {
    let oncall = ['U0CAROL', 'U0DAN'];
    serveUsergroup('S0ONCALL', () => oncall);
    let t = Date.parse('2026-01-01T10:00:00Z');
    const directory = createSlackDirectory(slackClient());
    const roles = createRoleResolver({ roles: config.roles, directory, now: () => t });
    const executed: string[] = [];
    const approvals = createApprovals({
      store,
      audit: createAudit({ store, now: () => new Date(t) }),
      authority: createAuthority({ roles, directory }),
      config,
      executors: {
        scale: async (request) => {
          executed.push(request.id);
          return { replicas: 4 };
        },
      },
      now: () => new Date(t),
    });
    const actor = (id: string) => ({ id, via: 'slack' as const, channel: 'C0INCIDENT' });

    const request = await approvals.submit({
      actor: actor('U0CAROL'),
      action: 'scale',
      target: 'pushizo/dispatch-ios',
      params: { replicas: 4 },
      preview: 'scale pushizo/dispatch-ios to 4',
    });
    expect(request.status).toBe('pending');

    oncall = ['U0CAROL'];
    t += 5 * 60_000 + 1;
    await expect(approvals.approve(request.id, actor('U0DAN'))).rejects.toMatchObject({
      code: 'Forbidden',
      params: { role: 'operator' },
    });
    expect(executed).toEqual([]);

    const done = await approvals.approve(request.id, actor('U0ALICE'));
    expect(done.status).toBe('done');
    expect(executed).toEqual([request.id]);
  });

  it('an admin approver is refused when Slack says 2FA is off, an operator for lacking the role', async () => {
    serveUserInfo('U0BOB', true);
    serveUserInfo('U0ANN', false);
    const directory = createSlackDirectory(slackClient());
    const roles = createRoleResolver({ roles: config.roles, directory, now: Date.now });
    const executed: string[] = [];
    const approvals = createApprovals({
      store,
      audit: createAudit({ store, now: () => new Date() }),
      authority: createAuthority({ roles, directory }),
      config,
      executors: {
        purge: async (request) => {
          executed.push(request.id);
          return {};
        },
      },
    });
    const actor = (id: string) => ({ id, via: 'slack' as const, channel: 'C0INCIDENT' });
    const request = await approvals.submit({
      actor: actor('U0BOB'),
      action: 'purge',
      target: 'pushizo/events',
      params: {},
      preview: 'purge pushizo/events',
    });
    await expect(approvals.approve(request.id, actor('U0ANN'))).rejects.toMatchObject({
      code: 'TwoFactorRequired',
      params: { status: 'off' },
    });
    await expect(approvals.approve(request.id, actor('U0ALICE'))).rejects.toMatchObject({
      code: 'Forbidden',
      params: { role: 'admin' },
    });
    expect(executed).toEqual([]);
  });
});
