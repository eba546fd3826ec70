import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApprovals } from '../../src/approvals/service.js';
import { createAudit } from '../../src/audit/audit.js';
import { configSchema } from '../../src/config/schema.js';
import { createAuthority, createGuard } from '../../src/guards/guard.js';
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

describe('the plain checks the approvals service uses', () => {
  beforeEach(blockNetwork);
  afterEach(restoreNetwork);

  function guardWithSlack() {
    const directory = createSlackDirectory(slackClient());
    const roles = createRoleResolver({ roles: config.roles, directory, now: Date.now });
    return createGuard({ roles, directory, config });
  }

  it('checkRole answers Forbidden naming the role, or nothing when the actor holds it', async () => {
    serveUsergroup('S0ONCALL', () => ['U0CAROL']);
    const guard = guardWithSlack();
    expect(await guard.checkRole('U0CAROL', 'operator', 'approve scale')).toBeUndefined();
    expect(await guard.checkRole('U0ALICE', 'operator', 'approve scale')).toBeUndefined();
    const refused = await guard.checkRole('U0ZED', 'operator', 'approve scale');
    expect(refused?.code).toBe('Forbidden');
    expect(refused?.params).toEqual({ role: 'operator', action: 'approve scale' });
  });

  it('checkTwoFactor only asks Slack for admin roles, and refuses when Slack does not confirm', async () => {
    const bob = serveUserInfo('U0BOB', undefined);
    const guard = guardWithSlack();
    expect(await guard.checkTwoFactor('U0BOB', 'operator', 'pause')).toBeUndefined();
    expect(bob.count).toBe(0);
    expect((await guard.checkTwoFactor('U0BOB', 'admin', 'purge'))?.params).toEqual({
      action: 'purge',
      status: 'unknown',
    });
    expect(bob.count).toBe(1);
  });

  it('checkPolicy applies the policy’s role and 2FA for an action', async () => {
    serveUserInfo('U0BOB', true);
    serveUserInfo('U0ANN', false);
    const guard = guardWithSlack();
    expect(await guard.checkPolicy('U0BOB', 'purge')).toBeUndefined();
    expect((await guard.checkPolicy('U0ANN', 'purge'))?.code).toBe('TwoFactorRequired');
    expect((await guard.checkPolicy('U0ALICE', 'purge'))?.code).toBe('Forbidden');
    expect(await guard.checkPolicy('U0ALICE', 'scale')).toBeUndefined();
  });

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
});
