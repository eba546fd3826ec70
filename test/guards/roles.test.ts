import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { createRoleResolver } from '../../src/guards/roles.js';
import { createOfflineDirectory, createSlackDirectory } from '../../src/guards/slack-directory.js';
import { blockNetwork, restoreNetwork, serveUsergroup, slackClient } from './slack-api.js';

const FIVE_MINUTES = 5 * 60_000;

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function roles(partial: Partial<Config['roles']>): Config['roles'] {
  return { viewer: [], operator: [], admin: [], ...partial };
}

describe('roles from user ids and "*"', () => {
  const directory = createOfflineDirectory();

  it('a user listed under operator is an operator, which includes viewer but not admin', async () => {
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['U0ALICE'], admin: ['U0BOB'] }),
      directory,
      now: Date.now,
    });
    expect(await r.roleOf('U0ALICE')).toBe('operator');
    expect(await r.has('U0ALICE', 'viewer')).toBe(true);
    expect(await r.has('U0ALICE', 'operator')).toBe(true);
    expect(await r.has('U0ALICE', 'admin')).toBe(false);
  });

  it('an admin holds every role', async () => {
    const r = createRoleResolver({ roles: roles({ admin: ['U0BOB'] }), directory, now: Date.now });
    expect(await r.roleOf('U0BOB')).toBe('admin');
    expect(await r.has('U0BOB', 'operator')).toBe(true);
    expect(await r.has('U0BOB', 'viewer')).toBe(true);
  });

  it('Enterprise Grid W… ids are matched like U… ids', async () => {
    const r = createRoleResolver({ roles: roles({ operator: ['W0GRID'] }), directory, now: Date.now });
    expect(await r.roleOf('W0GRID')).toBe('operator');
  });

  it('"*" grants its role to everyone, including a command-line actor', async () => {
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['U0ALICE'] }),
      directory,
      now: Date.now,
    });
    expect(await r.roleOf('U0ZED')).toBe('viewer');
    expect(await r.roleOf('cli:alice')).toBe('viewer');
  });

  it('someone listed nowhere, with no "*", holds no role at all', async () => {
    const r = createRoleResolver({ roles: roles({ operator: ['U0ALICE'] }), directory, now: Date.now });
    expect(await r.roleOf('U0ZED')).toBeUndefined();
    expect(await r.has('U0ZED', 'viewer')).toBe(false);
  });

  it('a cli:<os user> actor matches only "*" entries, never a user id that looks like its name', async () => {
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['U0ALICE'] }),
      directory,
      now: Date.now,
    });
    expect(await r.roleOf('cli:U0ALICE')).toBe('viewer');
    expect(await r.has('cli:U0ALICE', 'operator')).toBe(false);
  });

  it('offline, a user-group entry grants nothing (there is no Slack to ask who is in it)', async () => {
    const r = createRoleResolver({ roles: roles({ operator: ['S0ONCALL'] }), directory, now: Date.now });
    expect(await r.roleOf('U0CAROL')).toBeUndefined();
  });
});

describe('roles from user groups, through usergroups.users.list', () => {
  beforeEach(blockNetwork);
  afterEach(restoreNetwork);

  it('a member of a group listed under operator is an operator, and a non-member is not', async () => {
    serveUsergroup('S0ONCALL', () => ['U0CAROL', 'U0DAN']);
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['S0ONCALL'] }),
      directory: createSlackDirectory(slackClient()),
      now: Date.now,
    });
    expect(await r.roleOf('U0CAROL')).toBe('operator');
    expect(await r.has('U0DAN', 'operator')).toBe(true);
    expect(await r.roleOf('U0ERIN')).toBe('viewer');
  });

  /**
   * Carol looked up, then Carol and Dan 5 minutes later, then Carol 1 ms after that: each answer,
   * and how many times Slack was asked by then.
   */
  async function lookupsOverFiveMinutes() {
    const calls = serveUsergroup('S0ONCALL', () => ['U0CAROL']);
    const c = clock();
    const r = createRoleResolver({
      roles: roles({ operator: ['S0ONCALL'] }),
      directory: createSlackDirectory(slackClient()),
      now: c.now,
    });
    const first = { carol: await r.has('U0CAROL', 'operator'), calls: calls.count };
    c.advance(FIVE_MINUTES);
    const within = {
      carol: await r.has('U0CAROL', 'operator'),
      dan: await r.roleOf('U0DAN'),
      calls: calls.count,
    };
    c.advance(1);
    const after = { carol: await r.has('U0CAROL', 'operator'), calls: calls.count };
    return { first, within, after };
  }

  it('a second lookup within 5 minutes makes no HTTP call', async () => {
    const { first, within } = await lookupsOverFiveMinutes();
    expect(first.carol).toBe(true);
    expect(first.calls).toBe(1);
    expect(within.carol).toBe(true);
    expect(within.dan).toBeUndefined();
    expect(within.calls).toBe(1);
  });

  it('after 5 minutes and 1 ms Slack is asked again', async () => {
    const { after } = await lookupsOverFiveMinutes();
    expect(after.carol).toBe(true);
    expect(after.calls).toBe(2);
  });

  it('a cache TTL longer than 5 minutes is capped at 5 minutes', async () => {
    const calls = serveUsergroup('S0ONCALL', () => ['U0CAROL']);
    const c = clock();
    const r = createRoleResolver({
      roles: roles({ operator: ['S0ONCALL'] }),
      directory: createSlackDirectory(slackClient()),
      now: c.now,
      cacheTtlMs: 60 * 60_000,
    });
    await r.has('U0CAROL', 'operator');
    c.advance(FIVE_MINUTES + 1);
    await r.has('U0CAROL', 'operator');
    expect(calls.count).toBe(2);
  });

  it('someone removed from the group keeps the role until the cache expires, then loses it', async () => {
    let members = ['U0CAROL', 'U0DAN'];
    serveUsergroup('S0ONCALL', () => members);
    const c = clock();
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['S0ONCALL'] }),
      directory: createSlackDirectory(slackClient()),
      now: c.now,
    });
    expect(await r.roleOf('U0DAN')).toBe('operator');

    members = ['U0CAROL', 'U0ERIN'];
    c.advance(60_000);
    expect(await r.roleOf('U0DAN')).toBe('operator');
    expect(await r.roleOf('U0ERIN')).toBe('viewer');

    c.advance(FIVE_MINUTES);
    expect(await r.roleOf('U0DAN')).toBe('viewer');
    expect(await r.roleOf('U0ERIN')).toBe('operator');
  });

  it('commands arriving together for the same group share one Slack call', async () => {
    const calls = serveUsergroup('S0ONCALL', () => ['U0CAROL']);
    const r = createRoleResolver({
      roles: roles({ operator: ['S0ONCALL'] }),
      directory: createSlackDirectory(slackClient()),
      now: Date.now,
    });
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => r.has('U0CAROL', 'operator')));
    expect(answers).toEqual([true, true, true, true, true]);
    expect(calls.count).toBe(1);
  });

  it('a user listed by id or a "*" is answered without asking Slack about groups', async () => {
    const calls = serveUsergroup('S0ADMINS', () => ['U0ALICE']);
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['U0ALICE'], admin: ['S0ADMINS'] }),
      directory: createSlackDirectory(slackClient()),
      now: Date.now,
    });
    expect(await r.has('U0ALICE', 'operator')).toBe(true);
    expect(await r.has('U0ZED', 'viewer')).toBe(true);
    expect(calls.count).toBe(0);
    // roleOf wants the strongest role, so it does ask.
    expect(await r.roleOf('U0ALICE')).toBe('admin');
    expect(calls.count).toBe(1);
  });

  it('a Slack error grants nothing, names the group, and is retried after a short while, not 5 minutes', async () => {
    let failing = true;
    const calls = serveUsergroup('S0ONCALL', () => (failing ? { error: 'no_such_subteam' } : ['U0CAROL']));
    const errors: string[] = [];
    const c = clock();
    const r = createRoleResolver({
      roles: roles({ viewer: ['*'], operator: ['S0ONCALL'] }),
      directory: createSlackDirectory(slackClient()),
      now: c.now,
      onLookupError: (group, error) => errors.push(`${group}: ${(error as Error).message}`),
    });
    expect(await r.resolve('U0CAROL')).toEqual({ role: 'viewer', unresolvedGroups: ['S0ONCALL'] });
    expect(await r.has('U0CAROL', 'operator')).toBe(false);
    expect(errors[0]).toMatch(/S0ONCALL: .*no_such_subteam/);
    expect(calls.count).toBe(1);

    failing = false;
    c.advance(10_001);
    expect(await r.has('U0CAROL', 'operator')).toBe(true);
    expect(calls.count).toBe(2);
  });

  it('an HTTP failure from Slack grants nothing', async () => {
    const { default: nock } = await import('nock');
    nock('https://slack.com').post('/api/usergroups.users.list').reply(503, 'upstream down');
    const r = createRoleResolver({
      roles: roles({ admin: ['S0ADMINS'] }),
      directory: createSlackDirectory(slackClient()),
      now: Date.now,
    });
    expect(await r.has('U0BOB', 'admin')).toBe(false);
  });

  it('a Slack that answers only after the lookup timeout grants nothing, even though its late answer would have', async () => {
    const { default: nock } = await import('nock');
    nock('https://slack.com')
      .post('/api/usergroups.users.list')
      .delay(3000)
      .reply(200, { ok: true, users: ['U0BOB'] });
    const r = createRoleResolver({
      roles: roles({ admin: ['S0ADMINS'] }),
      directory: createSlackDirectory(slackClient(), { timeoutMs: 200 }),
      now: Date.now,
    });
    expect(await r.has('U0BOB', 'admin')).toBe(false);
  });
});
