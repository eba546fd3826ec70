import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Audit, createAudit } from '../../src/audit/audit.js';
import { ActionId } from '../../src/blocks/action-ids.js';
import { createCommandRegistry } from '../../src/commands/registry.js';
import { configSchema } from '../../src/config/schema.js';
import { createGuardMiddleware } from '../../src/guards/middleware.js';
import { createRoleResolver } from '../../src/guards/roles.js';
import { createOfflineDirectory } from '../../src/guards/slack-directory.js';
import { silentLogger } from '../../src/lib/logger.js';
import { createDispatcher } from '../../src/pipeline/dispatcher.js';
import type { CommandDefinition } from '../../src/pipeline/types.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { factsOf } from '../../src/verbs.js';
import { type Harness, slackAround } from '../transports/slack/harness.js';
import { blockNetwork, restoreNetwork } from './slack-api.js';

const config = configSchema.parse({
  slack: { allowedChannels: ['C0INCIDENT'] },
  roles: { viewer: ['*'], operator: ['U0ALICE'], admin: [] },
  systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
});

/** What the commands ran with: the words of each run. */
let ran: string[][] = [];
const definition = (verb: string, mutating: boolean): CommandDefinition => ({
  verb,
  mutating,
  run: async (_ctx, args) => {
    ran.push([verb, ...args]);
    return { ok: true, message: { text: `${verb} ran`, blocks: [] }, visibility: 'ephemeral' };
  },
});
const commands = [definition('status', false), definition('pause', true)];

function slashCommand(user: string, text: string, channel = 'C0INCIDENT') {
  return {
    token: 'verification',
    command: '/queue',
    text,
    user_id: user,
    user_name: user.toLowerCase(),
    channel_id: channel,
    channel_name: 'incident',
    team_id: 'T0TEAM',
    team_domain: 'acme',
    api_app_id: 'A0APP',
    response_url: 'https://hooks.slack.com/commands/T0TEAM/1/abc',
    trigger_id: '1.2.3',
  };
}

function buttonClick(user: string, actionId: string, value: string, channel = 'C0INCIDENT') {
  return {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase(), team_id: 'T0TEAM' },
    api_app_id: 'A0APP',
    token: 'verification',
    container: { type: 'message', message_ts: '111.222', channel_id: channel, is_ephemeral: false },
    trigger_id: '1.2.3',
    team: { id: 'T0TEAM', domain: 'acme' },
    channel: { id: channel, name: 'incident' },
    response_url: 'https://hooks.slack.com/actions/T0TEAM/1/xyz',
    actions: [{ type: 'button', action_id: actionId, block_id: 'b', value, action_ts: '1.1' }],
  };
}

/**
 * The guards on Slack's path: the real listeners hand each payload, parsed once, to one
 * dispatcher whose middleware chain runs the guards (there is no second chain at the transport).
 */
describe('the guards, for a Slack payload', () => {
  let dir: string;
  let store: Store;
  let audit: Audit;
  let slack: Harness;
  let resolved: string[];
  let responses: Record<string, unknown>[];

  beforeEach(async () => {
    blockNetwork();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-slack-guard-'));
    store = createSqliteStore(join(dir, 'audit.db'));
    await store.migrate();
    audit = createAudit({ store, now: () => new Date() });
    ran = [];
    resolved = [];
    responses = [];
    nock('https://hooks.slack.com')
      .persist()
      .post(/.*/)
      .reply(200, (_uri, body) => {
        responses.push(body as Record<string, unknown>);
        return { ok: true };
      });

    const directory = createOfflineDirectory();
    const roles = createRoleResolver({ roles: config.roles, directory, now: Date.now });
    const registry = createCommandRegistry(commands);
    const dispatcher = createDispatcher({
      ctx: { config, backends: undefined as never, now: () => new Date() },
      // Counts the look-ups: one per payload.
      commands: {
        ...registry,
        resolve: (verb) => {
          resolved.push(verb);
          return registry.resolve(verb);
        },
      },
      logger: silentLogger(),
      middleware: [createGuardMiddleware({ roles, directory, config, verbs: factsOf, audit })],
    });
    slack = slackAround(dispatcher, { logger: silentLogger() });
  });

  afterEach(async () => {
    restoreNetwork();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function deliver(body: Record<string, unknown>) {
    return (await slack.send(body)).acks;
  }

  it('refuses a viewer’s /queue pause before the command runs: acked once, answered ephemerally, audited once', async () => {
    const acks = await deliver(slashCommand('U0ZED', 'pause pushizo/dispatch-ios'));
    expect(acks).toBe(1);
    expect(ran).toEqual([]);
    expect(resolved).toEqual(['pause']);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({
      response_type: 'ephemeral',
      text: 'You need the `operator` role to pause.',
    });
    const entries = await audit.recent(5);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actorId: 'U0ZED',
      via: 'slack',
      channel: 'C0INCIDENT',
      action: 'denied',
      target: 'pushizo/dispatch-ios',
      outcome: 'denied',
    });
  });

  it('lets an operator’s pause through to the command, the verb resolved once', async () => {
    const acks = await deliver(slashCommand('U0ALICE', 'pause pushizo/dispatch-ios'));
    expect(acks).toBe(1);
    expect(ran).toEqual([['pause', 'pushizo/dispatch-ios']]);
    expect(resolved).toEqual(['pause']);
    expect(responses.map((r) => r.text)).toEqual(['pause ran']);
    expect(await audit.recent(5)).toEqual([]);
  });

  it('refuses a mutating command typed outside the allowed channels, naming them', async () => {
    await deliver(slashCommand('U0ALICE', 'pause pushizo/dispatch-ios', 'C0RANDOM'));
    expect(ran).toEqual([]);
    expect(responses[0]?.text).toContain('`C0INCIDENT`');
  });

  it('lets a button for a read-only command through from any channel', async () => {
    await deliver(buttonClick('U0ZED', ActionId.StatusRefresh, 'pushizo', 'C0RANDOM'));
    expect(ran).toEqual([['status', 'pushizo']]);
    expect(responses.map((r) => r.text)).toEqual(['status ran']);
  });
});
