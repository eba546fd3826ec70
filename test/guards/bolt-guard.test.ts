import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from '@slack/bolt';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Audit, createAudit } from '../../src/audit/audit.js';
import { ActionId } from '../../src/blocks/action-ids.js';
import { createCommandRegistry } from '../../src/commands/registry.js';
import { configSchema } from '../../src/config/schema.js';
import { createBoltGuard, GUARD_CONTEXT_KEY } from '../../src/guards/middleware.js';
import { createRoleResolver } from '../../src/guards/roles.js';
import { createOfflineDirectory } from '../../src/guards/slack-directory.js';
import type { CommandDefinition } from '../../src/pipeline/types.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { requestFromSlack } from '../../src/transports/slack/request.js';
import { factsOf } from '../../src/verbs.js';
import { blockNetwork, restoreNetwork } from './slack-api.js';

const config = configSchema.parse({
  slack: { allowedChannels: ['C0INCIDENT'] },
  roles: { viewer: ['*'], operator: ['U0ALICE'], admin: [] },
  systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
});

const definition = (verb: string, mutating: boolean): CommandDefinition => ({
  verb,
  mutating,
  run: async () => ({ ok: true, message: { text: verb, blocks: [] }, visibility: 'ephemeral' }),
});
const registry = createCommandRegistry([definition('status', false), definition('pause', true)]);

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

describe('the Bolt guard', () => {
  let dir: string;
  let store: Store;
  let audit: Audit;
  let app: App;
  let listened: { verb: string; guard: unknown }[];
  let responses: Record<string, unknown>[];

  beforeEach(async () => {
    blockNetwork();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-bolt-guard-'));
    store = createSqliteStore(join(dir, 'audit.db'));
    await store.migrate();
    audit = createAudit({ store, now: () => new Date() });
    listened = [];
    responses = [];
    nock('https://hooks.slack.com')
      .persist()
      .post(/.*/)
      .reply(200, (_uri, body) => {
        responses.push(body as Record<string, unknown>);
        return { ok: true };
      });

    const receiver = { init() {}, start: async () => {}, stop: async () => {} };
    app = new App({ token: 'xoxb-test', botId: 'B0BOT', botUserId: 'U0BOT', receiver });
    const directory = createOfflineDirectory();
    const roles = createRoleResolver({ roles: config.roles, directory, now: Date.now });
    app.use(
      createBoltGuard({
        roles,
        directory,
        config,
        verbs: factsOf,
        audit,
        toRequest: requestFromSlack,
        commandFor: (verb) => registry.get(verb),
      }),
    );
    app.command('/queue', async ({ ack, command, context }) => {
      await ack();
      listened.push({ verb: command.text.split(' ')[0] ?? '', guard: context[GUARD_CONTEXT_KEY] });
    });
    app.action(/^queue_ops\./, async ({ ack, context, action }) => {
      await ack();
      listened.push({
        verb: 'action_id' in action ? action.action_id : '',
        guard: context[GUARD_CONTEXT_KEY],
      });
    });
  });

  afterEach(async () => {
    restoreNetwork();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function deliver(body: unknown) {
    let acks = 0;
    await app.processEvent({
      body: body as Record<string, unknown>,
      ack: async () => {
        acks++;
      },
    });
    return acks;
  }

  it('refuses a viewer’s /queue pause before the listener runs: acked once, answered ephemerally, audited', async () => {
    const acks = await deliver(slashCommand('U0ZED', 'pause pushizo/dispatch-ios'));
    expect(acks).toBe(1);
    expect(listened).toEqual([]);
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({
      response_type: 'ephemeral',
      replace_original: false,
      text: 'You need the `operator` role to pause.',
    });
    const [entry] = await audit.recent(1);
    expect(entry).toMatchObject({
      actorId: 'U0ZED',
      via: 'slack',
      channel: 'C0INCIDENT',
      action: 'denied',
      target: 'pushizo/dispatch-ios',
      outcome: 'denied',
    });
  });

  it('lets an operator’s pause through to the listener, leaving the verdict in the context', async () => {
    const acks = await deliver(slashCommand('U0ALICE', 'pause pushizo/dispatch-ios'));
    expect(acks).toBe(1);
    expect(listened).toEqual([
      { verb: 'pause', guard: { allow: true, approvalsNeeded: 0, role: 'operator', unresolvedGroups: [] } },
    ]);
    expect(responses).toEqual([]);
    expect(await audit.recent(5)).toEqual([]);
  });

  it('refuses a mutating command typed outside the allowed channels, naming them', async () => {
    await deliver(slashCommand('U0ALICE', 'pause pushizo/dispatch-ios', 'C0RANDOM'));
    expect(listened).toEqual([]);
    expect(responses[0]?.text).toContain('`C0INCIDENT`');
  });

  it('lets a button for a read-only command through from any channel', async () => {
    await deliver(buttonClick('U0ZED', ActionId.StatusRefresh, 'pushizo', 'C0RANDOM'));
    expect(listened.map((l) => l.verb)).toEqual([ActionId.StatusRefresh]);
    expect(responses).toEqual([]);
  });
});
