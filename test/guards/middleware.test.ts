import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Audit, createAudit } from '../../src/audit/audit.js';
import { assertValidMessage } from '../../src/blocks/validate.js';
import { type Config, configSchema } from '../../src/config/schema.js';
import { createGuardMiddleware, type GuardMiddleware } from '../../src/guards/middleware.js';
import { createRoleResolver } from '../../src/guards/roles.js';
import {
  createOfflineDirectory,
  createSlackDirectory,
  type SlackDirectory,
} from '../../src/guards/slack-directory.js';
import type { Reply, Request } from '../../src/pipeline/types.js';
import { createSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { factsOf } from '../../src/verbs.js';
import { blockNetwork, restoreNetwork, serveUsergroup, serveUserInfo, slackClient } from './slack-api.js';

const ALLOWED = ['C0INCIDENT', 'C0OPS'];

function makeConfig(overrides: Record<string, unknown> = {}): Config {
  return configSchema.parse({
    slack: { allowedChannels: ALLOWED },
    roles: { viewer: ['*'], operator: ['U0ALICE', 'S0ONCALL'], admin: ['U0BOB'] },
    systems: [{ name: 'pushizo', type: 'bullmq', redis: 'redis://127.0.0.1:1' }],
    ...overrides,
  });
}

const commands = {
  pause: { verb: 'pause', mutating: true },
  purge: { verb: 'purge', mutating: true },
  status: { verb: 'status', mutating: false },
  dlq: { verb: 'dlq', mutating: false },
};

function slackRequest(actor: string, words: string[], channel: string | undefined = 'C0INCIDENT'): Request {
  return { actor: { id: actor, name: actor.toLowerCase() }, via: 'slack', channel, words, locale: 'en' };
}

function cliRequest(actor: string, words: string[]): Request {
  return { actor: { id: actor }, via: 'cli', words, locale: 'en' };
}

/** The command itself: it only says that it ran, so a test can tell whether the guard let it. */
function commandRunner() {
  const ran: string[] = [];
  const next = (verb: string) => async (): Promise<Reply> => {
    ran.push(verb);
    return { ok: true, message: { text: `${verb} ran`, blocks: [] }, visibility: 'in_channel' };
  };
  return { ran, next };
}

describe('the guard middleware', () => {
  let dir: string;
  let store: Store;
  let audit: Audit;

  beforeEach(async () => {
    blockNetwork();
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-guards-'));
    store = createSqliteStore(join(dir, 'audit.db'));
    await store.migrate();
    audit = createAudit({ store, now: () => new Date() });
  });

  afterEach(async () => {
    restoreNetwork();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function guard(
    config = makeConfig(),
    directory: SlackDirectory = createOfflineDirectory(),
  ): GuardMiddleware {
    const roles = createRoleResolver({ roles: config.roles, directory, now: Date.now });
    return createGuardMiddleware({ roles, directory, config, verbs: factsOf, audit });
  }

  async function run(mw: GuardMiddleware, request: Request) {
    const verb = request.words[0] as keyof typeof commands;
    const runner = commandRunner();
    const reply = await mw(request, runner.next(verb), { command: commands[verb] });
    return { reply, ran: runner.ran.length > 0 };
  }

  it('a viewer running pause gets an ephemeral Forbidden line naming operator, and the command does not run', async () => {
    const { reply, ran } = await run(guard(), slackRequest('U0ZED', ['pause', 'pushizo/dispatch-ios']));
    expect(ran).toBe(false);
    expect(reply.ok).toBe(false);
    expect(reply.visibility).toBe('ephemeral');
    expect(reply.error).toEqual({ code: 'Forbidden', params: { role: 'operator', action: 'pause' } });
    expect(reply.message.text).toBe('You need the `operator` role to pause.');
    expect(JSON.stringify(reply.message.blocks)).toContain('You need the `operator` role to pause.');
    expect(() => assertValidMessage(reply.message)).not.toThrow();
  });

  it('the denial is in the audit trail before the answer comes back, with who, where, what and why', async () => {
    await run(guard(), slackRequest('U0ZED', ['pause', 'pushizo/dispatch-ios']));
    const [entry] = await audit.recent(1);
    expect(entry).toMatchObject({
      actorId: 'U0ZED',
      actorName: 'u0zed',
      via: 'slack',
      channel: 'C0INCIDENT',
      action: 'denied',
      target: 'pushizo/dispatch-ios',
      outcome: 'denied',
      params: {
        command: 'pause',
        code: 'Forbidden',
        details: { role: 'operator', action: 'pause' },
        actorRole: 'viewer',
      },
      error: 'You need the `operator` role to pause.',
    });
    expect(await audit.verify()).toEqual({ ok: true, count: 1 });
  });

  it('a mutating command in a channel that is not allowed gets WrongChannel naming the allowed channels', async () => {
    const { reply, ran } = await run(
      guard(),
      slackRequest('U0BOB', ['pause', 'pushizo/scheduler'], 'C0RANDOM'),
    );
    expect(ran).toBe(false);
    expect(reply.error?.code).toBe('WrongChannel');
    expect(reply.message.text).toContain('`C0INCIDENT`, `C0OPS`');
    const [entry] = await audit.recent(1);
    expect(entry).toMatchObject({ action: 'denied', outcome: 'denied', channel: 'C0RANDOM' });
    expect(entry?.params).toMatchObject({ code: 'WrongChannel', details: { channels: ALLOWED } });
  });

  it('with no allowed channel configured, the denial says that none is listed yet', async () => {
    const mw = guard(makeConfig({ slack: { allowedChannels: [] } }));
    const { reply } = await run(mw, slackRequest('U0BOB', ['pause', 'pushizo/scheduler']));
    expect(reply.error?.code).toBe('WrongChannel');
    expect(reply.message.text).toContain('No channel is listed in `slack.allowedChannels`');
    // Not "only runs in none": the first line says it runs nowhere yet, in English.
    expect(reply.message.text).toContain('`pause` runs in no channel yet; read-only commands work anywhere.');
    expect(reply.message.text).not.toContain('none');
  });

  it('read-only commands run in any channel and leave no denial in the audit', async () => {
    const mw = guard();
    expect((await run(mw, slackRequest('U0ZED', ['status'], 'C0RANDOM'))).ran).toBe(true);
    expect((await run(mw, slackRequest('U0ZED', ['dlq', 'pushizo/events'], 'D0DIRECT'))).ran).toBe(true);
    expect(await audit.recent(10)).toEqual([]);
  });

  it('an operator can pause in an allowed channel', async () => {
    const { reply, ran } = await run(guard(), slackRequest('U0ALICE', ['pause', 'pushizo/scheduler']));
    expect(ran).toBe(true);
    expect(reply.ok).toBe(true);
  });

  it('with no "*" viewer entry, a stranger cannot even read', async () => {
    const mw = guard(makeConfig({ roles: { viewer: [], operator: ['U0ALICE'], admin: [] } }));
    const { reply, ran } = await run(mw, slackRequest('U0ZED', ['status'], 'C0RANDOM'));
    expect(ran).toBe(false);
    expect(reply.message.text).toBe('You need the `viewer` role to status.');
  });

  describe('on the command line', () => {
    it('is not channel-restricted: --user of an operator pauses with no channel at all', async () => {
      const { ran } = await run(guard(), cliRequest('U0ALICE', ['pause', 'pushizo/scheduler']));
      expect(ran).toBe(true);
    });

    it('is role-checked: the OS user (cli:<name>) only matches "*" and is told about --user', async () => {
      const { reply, ran } = await run(guard(), cliRequest('cli:alice', ['pause', 'pushizo/scheduler']));
      expect(ran).toBe(false);
      expect(reply.error?.code).toBe('Forbidden');
      expect(reply.message.text).toContain('you are `cli:alice`');
      expect(reply.message.text).toContain('--user U…');
      const [entry] = await audit.recent(1);
      expect(entry).toMatchObject({ actorId: 'cli:alice', via: 'cli', action: 'denied', outcome: 'denied' });
      expect(entry?.channel).toBeUndefined();
    });

    it('a refusal is audited with the OS account, host and identity, as requests and approvals are', async () => {
      const mw = guard(makeConfig({ cli: { users: { alice: ['U0ALICE'] } } }));
      const asked = (actor: string, osUser: string) =>
        run(mw, {
          actor: { id: actor, osUser, host: 'ops-1' },
          via: 'cli',
          words: ['purge', 'pushizo/scheduler'],
          locale: 'en',
        });
      expect((await asked('U0ALICE', 'alice')).ran).toBe(false);
      const [bound] = await audit.recent(1);
      expect(bound).toMatchObject({
        action: 'denied',
        params: { command: 'purge', osUser: 'alice', host: 'ops-1', identity: 'bound' },
      });
      expect((await asked('U0DAVE', 'dave')).ran).toBe(false);
      const [claimed] = await audit.recent(1);
      expect(claimed?.params).toMatchObject({ osUser: 'dave', host: 'ops-1', identity: 'claimed' });
    });

    it('offline, a user-group entry grants nothing', async () => {
      const { ran } = await run(guard(), cliRequest('U0CAROL', ['pause', 'pushizo/scheduler']));
      expect(ran).toBe(false);
    });
  });

  describe('user groups through Slack', () => {
    /**
     * Carol, in the operator group, pauses; once the group's cache has run out (5 minutes and 1 ms)
     * Slack answers an error about the group, and she pauses again.
     */
    async function pauseTwiceAsGroupMember() {
      let failing = false;
      serveUsergroup('S0ONCALL', () => (failing ? { error: 'ratelimited' } : ['U0CAROL']));
      const config = makeConfig();
      const directory = createSlackDirectory(slackClient());
      let t = 1_700_000_000_000;
      const roles = createRoleResolver({ roles: config.roles, directory, now: () => t });
      const mw = createGuardMiddleware({ roles, directory, config, verbs: factsOf, audit });
      const first = await run(mw, slackRequest('U0CAROL', ['pause', 'pushizo/scheduler']));
      failing = true;
      t += 5 * 60_000 + 1;
      const second = await run(mw, slackRequest('U0CAROL', ['pause', 'pushizo/scheduler']));
      return { first, second };
    }

    it('a member of the operator group can pause', async () => {
      const { first } = await pauseTwiceAsGroupMember();
      expect(first.ran).toBe(true);
    });

    it('a Slack error about the group refuses and says so', async () => {
      const {
        second: { reply, ran },
      } = await pauseTwiceAsGroupMember();
      expect(ran).toBe(false);
      expect(reply.message.text).toContain('could not check the user groups `S0ONCALL`');
      const [entry] = await audit.recent(1);
      expect(entry?.params).toMatchObject({ unresolvedGroups: ['S0ONCALL'] });
    });
  });

  describe('2FA through users.info, with approvals.require2fa', () => {
    const config = makeConfig({ approvals: { ttlMinutes: 15, require2fa: true } });
    const mwFor = () => {
      const directory = createSlackDirectory(slackClient());
      const roles = createRoleResolver({ roles: config.roles, directory, now: Date.now });
      return createGuardMiddleware({ roles, directory, config, verbs: factsOf, audit });
    };

    it('an admin whom Slack reports with has_2fa: true may purge', async () => {
      const calls = serveUserInfo('U0BOB', true);
      expect((await run(mwFor(), slackRequest('U0BOB', ['purge', 'pushizo/events']))).ran).toBe(true);
      expect(calls.count).toBe(1);
    });

    it('an admin whom Slack reports with has_2fa: false is refused, told to turn it on', async () => {
      serveUserInfo('U0BOB', false);
      const { reply, ran } = await run(mwFor(), slackRequest('U0BOB', ['purge', 'pushizo/events']));
      expect(ran).toBe(false);
      expect(reply.error?.code).toBe('TwoFactorRequired');
      expect(reply.message.text).toContain('two-factor authentication is off for your account');
    });

    it('an admin for whom Slack leaves has_2fa out is refused with the "unknown" message', async () => {
      serveUserInfo('U0BOB', undefined);
      const { reply, ran } = await run(mwFor(), slackRequest('U0BOB', ['purge', 'pushizo/events']));
      expect(ran).toBe(false);
      expect(reply.error).toMatchObject({ code: 'TwoFactorRequired', params: { status: 'unknown' } });
      expect(reply.message.text).toContain('Slack did not confirm it is on for your account');
      expect(reply.message.text).toContain('Slack did not say whether two-factor authentication is on');
      const [entry] = await audit.recent(1);
      expect(entry).toMatchObject({ action: 'denied', params: { code: 'TwoFactorRequired' } });
    });

    it('a users.info error counts as unknown and refuses', async () => {
      nock('https://slack.com').post('/api/users.info').reply(200, { ok: false, error: 'user_not_found' });
      const { reply } = await run(mwFor(), slackRequest('U0BOB', ['purge', 'pushizo/events']));
      expect(reply.error?.code).toBe('TwoFactorRequired');
    });

    it('operator actions do not ask Slack about 2FA', async () => {
      const calls = serveUserInfo('U0BOB', undefined);
      expect((await run(mwFor(), slackRequest('U0BOB', ['pause', 'pushizo/events']))).ran).toBe(true);
      expect(calls.count).toBe(0);
    });
  });
});
