import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, randomName } from '../helpers/bullmq-jobs.js';
import {
  type LoopbackCall,
  type LoopbackSlack,
  spawnBot,
  startLoopbackSlack,
  writeBacklogAlertConfig,
} from '../helpers/loopback-slack.js';
import { POSTGRES_REQUIRED, POSTGRES_URL, probePostgres } from '../helpers/postgres.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { slackSignature } from '../transports/slack/harness.js';

const redisUrl = testRedisUrl();
const SECRET = 'replica-secret';
const unreachable = await probePostgres();
if (unreachable && POSTGRES_REQUIRED) throw new Error(`PostgreSQL is required: ${unreachable}`);

/** Two real bot processes (`src/main.ts`) on one PostgreSQL schema, Slack's Web API on loopback. */
describe.skipIf(Boolean(unreachable))('two bot replicas on PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'queue-ops-replicas-'));
  const schema = `qo_esc_${randomBytes(5).toString('hex')}`;
  const prefix = randomName('rep');
  const bots = new Map<number, { child: ChildProcess; output: () => string }>();
  let slack: LoopbackSlack;
  let queue: Queue;
  let db: pg.Client;

  beforeAll(async () => {
    // Slack takes the alert's first post, but its answer never reaches the bot (a 5xx from a
    // proxy): the post is in the channel, the store does not know it.
    slack = await startLoopbackSlack();
    slack.failNextPostAnswer();
    queue = new Queue('dispatch-ios', { connection: connectionFor(redisUrl), prefix });
    await queue.waitUntilReady();
    db = new pg.Client({ connectionString: POSTGRES_URL });
    await db.connect();
  });

  afterAll(async () => {
    for (const { child } of bots.values()) child.kill('SIGKILL');
    await queue.close();
    await deletePrefix(redisUrl, prefix);
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.end();
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ports = new Map<number, number>();
  async function startBot(config: string): Promise<number> {
    const bot = await spawnBot(config, slack.url, {
      SLACK_BOT_TOKEN: 'xoxb-replica',
      SLACK_SIGNING_SECRET: SECRET,
    });
    bots.set(bot.child.pid!, bot);
    ports.set(bot.child.pid!, bot.port);
    return bot.child.pid!;
  }

  /** Someone opens queue-ops' Home tab; Slack sends the event to the replica the balancer picks. */
  async function openHome(pid: number, user: string): Promise<void> {
    const body = JSON.stringify({
      token: 'unused',
      team_id: 'T0TEAM',
      api_app_id: 'A0QUEUEOPS',
      type: 'event_callback',
      event_id: `Ev${randomBytes(4).toString('hex')}`,
      event_time: Math.floor(Date.now() / 1000),
      event: {
        type: 'app_home_opened',
        user,
        channel: 'D0HOME',
        tab: 'home',
        event_ts: `${Date.now() / 1000}`,
      },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    await expect
      .poll(
        async () => {
          const res = await fetch(`http://127.0.0.1:${ports.get(pid)}/slack/events`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-slack-request-timestamp': String(timestamp),
              'x-slack-signature': slackSignature(SECRET, timestamp, body),
            },
            body,
          }).catch(() => undefined);
          return res?.status;
        },
        { timeout: 30_000 },
      )
      .toBe(200);
  }
  /** The Home views published for `user`, oldest first, as the text of their blocks. */
  const homeViews = (user: string) =>
    slack.calls
      .filter((c) => c.method === 'views.publish' && c.body.user_id === user)
      .map((c) => c.body.view ?? '');

  const leaseOwner = async () =>
    (await db.query(`SELECT owner, expires_at FROM "${schema}".escalation_lease WHERE name = 'monitor'`))
      .rows[0] as { owner: string; expires_at: string } | undefined;
  const pidOf = (owner: string | undefined) => Number(owner?.split(':')[1]);

  let a: number;
  let b: number;
  /** Someone keeps their Home tab open at each replica (Slack sends each event to one of them). */
  let homeAt: Map<number, string>;
  let post: LoopbackCall;
  let leader: number;
  let follower: number;
  /** The leader's lease as it was before the leader was killed. */
  let lease: { owner: string; expires_at: string };
  const dump = () => [...bots.values()].map((bot) => bot.output()).join('\n---\n');

  beforeAll(async () => {
    const config = join(dir, 'queue-ops.yml');
    writeBacklogAlertConfig(config, { store: `${POSTGRES_URL}?schema=${schema}`, redis: redisUrl, prefix });
    a = await startBot(config);
    b = await startBot(config);
    homeAt = new Map([
      [a, 'U0HOMEA'],
      [b, 'U0HOMEB'],
    ]);
  });

  it('each replica keeps a Home tab open, showing no alert firing', async () => {
    for (const [pid, user] of homeAt) await openHome(pid, user);
    for (const user of homeAt.values()) {
      await expect.poll(() => homeViews(user).length, { timeout: 20_000, message: dump() }).toBe(1);
      expect(homeViews(user)[0]).toContain('No alert is firing.');
    }
  }, 90_000);

  it('exactly one replica runs the monitor, so a backlog’s alert is posted once', async () => {
    await queue.addBulk(Array.from({ length: 60 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    await expect.poll(() => slack.posts().length, { timeout: 40_000, message: dump() }).toBe(1);
    // The leader also sends the queue's chart into the thread; killed before that, its claim on
    // the chart would hold the outbox until it lapses (claimMs), which is not what this tests.
    await expect
      .poll(() => slack.calls.some((c) => c.method === 'files.completeUploadExternal'), {
        timeout: 20_000,
        message: dump(),
      })
      .toBe(true);
    post = slack.posts()[0]!;
    expect(post.body.text).toContain('CRITICAL: backlog on pushizo/dispatch-ios is 60');
    leader = pidOf((await leaseOwner())?.owner);
    expect([a, b]).toContain(leader);
    follower = leader === a ? b : a;
  }, 90_000);

  it('the post whose answer was lost is looked up by the alert id it carried, not posted again', () => {
    const alertId = (JSON.parse(post.body.metadata ?? '{}') as { event_payload?: { alert_id?: string } })
      .event_payload?.alert_id;
    expect(alertId).toMatch(/^a-/);
    expect(slack.calls.some((c) => c.method === 'conversations.history')).toBe(true);
  });

  it('the Home tabs kept fresh at both replicas show the alert', async () => {
    for (const user of homeAt.values()) {
      await expect
        .poll(() => homeViews(user).some((v) => v.includes('backlog')), { timeout: 30_000, message: dump() })
        .toBe(true);
    }
  }, 90_000);

  it('the leader’s lease runs no more than one and a half intervals past its last renewal', async () => {
    // A follower checking every half interval then takes over within two.
    lease = (await leaseOwner())!;
    expect(Date.parse(lease.expires_at) - Date.now()).toBeLessThanOrEqual(1500);
  });

  it('when the leader is killed the other takes the lease, only once the killed one’s has run out', async () => {
    bots.get(leader)!.child.kill('SIGKILL');
    await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'send-push', data: { n: i } })));
    await expect
      .poll(async () => pidOf((await leaseOwner())?.owner), { timeout: 20_000, message: dump() })
      .toBe(follower);
    // Taken only once the killed leader's lease had run out (both instants are the bots' own,
    // written to the lease): never two monitors at once across the handover. A lease taken at
    // `now` runs to `now` + 1.5 s, and may be taken only when the one before ended before `now`.
    const taken = (await leaseOwner())!;
    expect(Date.parse(taken.expires_at) - 1500).toBeGreaterThan(Date.parse(lease.expires_at));
  }, 60_000);

  it('the survivor updates the same message in place', async () => {
    await expect
      .poll(
        () =>
          slack.calls.some(
            (c) =>
              c.method === 'chat.update' && c.body.ts === post.ts && (c.body.text ?? '').includes('is 80'),
          ),
        {
          // The killed leader may have died holding a claim on an outbox item: it lapses (30 s).
          timeout: 45_000,
          message: dump(),
        },
      )
      .toBe(true);
  }, 60_000);

  it('the alert resolves in its one message, never posted twice', async () => {
    await queue.drain(true);
    await expect
      .poll(
        () =>
          slack.calls.some(
            (c) => c.method === 'chat.update' && (c.body.text ?? '').startsWith('Resolved: backlog'),
          ),
        {
          timeout: 20_000,
          message: dump(),
        },
      )
      .toBe(true);
    expect(slack.posts()).toHaveLength(1);
    expect(slack.calls.every((c) => c.method !== 'chat.update' || c.body.ts === post.ts)).toBe(true);
  }, 60_000);

  it('the Home tab kept fresh at the survivor follows the alert to its end', async () => {
    // The one kept at the killed replica died with it; its user's next open lands on a live one.
    await expect
      .poll(() => homeViews(homeAt.get(follower)!).at(-1), { timeout: 30_000, message: dump() })
      .toContain('No alert is firing.');
  }, 60_000);

  it('a clean stop gives the lease back for the next replica', async () => {
    const survivor = bots.get(follower)!.child;
    const exited = new Promise((resolve) => survivor.once('exit', resolve));
    survivor.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await leaseOwner()).toBeUndefined();
    bots.clear();
  });
});
