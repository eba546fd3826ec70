import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActionId } from '../../src/blocks/action-ids.js';
import { LIMIT_LEASE, MONITOR_LEASE } from '../../src/escalation/monitor.js';
import { freePort } from '../../src/lib/redis-server.js';
import { connectionFor, deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { jsonOf, runCli, withSchema } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { POSTGRES_REQUIRED, POSTGRES_SHOWN, POSTGRES_URL, probePostgres } from '../helpers/postgres.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { buttonClick, slackSignature, slashCommand } from '../transports/slack/harness.js';

/**
 * Two real bot processes in HTTP mode behind "one URL", on one PostgreSQL store: a command
 * arrives at one and its approval at the other, and the audit entries both write form one chain.
 */
const unreachable = await probePostgres();
const SECRET = 'replica-signing-secret';

if (unreachable && POSTGRES_REQUIRED) {
  describe('two replicas on PostgreSQL', () => {
    it('needs PostgreSQL', () => {
      throw new Error(
        `PostgreSQL is required here (CI or REQUIRE_POSTGRES=1) but ${POSTGRES_SHOWN}: ${unreachable}`,
      );
    });
  });
} else if (unreachable) {
  describe.skipIf(true)(`two replicas — SKIPPED: PostgreSQL not reachable at ${POSTGRES_SHOWN}`, () => {
    it('runs two bot processes on one store', () => {});
  });
} else {
  describe('two bot replicas in HTTP mode on one PostgreSQL store', () => {
    const redisUrl = testRedisUrl();
    const prefix = randomName('rep');
    const schema = `qo_replicas_${randomBytes(5).toString('hex')}`;
    const dir = mkdtempSync(join(tmpdir(), 'qo-replicas-'));
    const configFile = join(dir, 'queue-ops.yml');
    const posted: { path: string; body: Record<string, unknown> }[] = [];
    let slack: Server;
    const replicas: { child: ChildProcess; port: number; output: () => string }[] = [];

    async function startReplica(apiUrl: string) {
      const port = await freePort();
      const child = spawn(process.execPath, [resolve(import.meta.dirname, '../../dist/main.js')], {
        env: {
          PATH: process.env.PATH ?? '',
          SLACK_BOT_TOKEN: 'xoxb-replica',
          SLACK_SIGNING_SECRET: SECRET,
          SLACK_API_URL: apiUrl,
          PORT: String(port),
          QUEUE_OPS_CONFIG: configFile,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout?.on('data', (c) => {
        output += String(c);
      });
      child.stderr?.on('data', (c) => {
        output += String(c);
      });
      replicas.push({ child, port, output: () => output });
      const until = Date.now() + 30_000;
      while (!output.includes(`port ${port}`)) {
        if (Date.now() > until || child.exitCode !== null)
          throw new Error(`replica did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return port;
    }

    const cli = (args: string[]) => runCli(['--config', configFile, '--user', 'U0ALICE', ...args]);

    async function send(port: number, body: string, contentType: string) {
      const timestamp = Math.floor(Date.now() / 1000);
      const res = await fetch(`http://127.0.0.1:${port}/slack/events`, {
        method: 'POST',
        headers: {
          'content-type': contentType,
          'x-slack-request-timestamp': String(timestamp),
          'x-slack-signature': slackSignature(SECRET, timestamp, body),
        },
        body,
      });
      expect(res.status).toBe(200);
    }

    beforeAll(async () => {
      slack = createServer((req, res) => {
        let raw = '';
        req.on('data', (c) => {
          raw += String(c);
        });
        req.on('end', () => {
          let body: Record<string, unknown> = {};
          try {
            body = raw.startsWith('{') ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw));
          } catch {
            body = { raw };
          }
          posted.push({ path: req.url ?? '', body });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              ok: true,
              user_id: 'U0BOT',
              bot_id: 'B0BOT',
              team_id: 'T0TEAM',
              ts: `1700000000.${String(posted.length).padStart(6, '0')}`,
              channel: 'C0INCIDENT',
              user: { id: body.user, is_admin: false, has_2fa: true },
            }),
          );
        });
      });
      await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
      const apiUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`;

      const queue = new Queue('dispatch', { prefix, connection: connectionFor(redisUrl) });
      await queue.add('push', { n: 1 });
      await queue.close();

      writeConfigFile(dir, {
        store: withSchema(POSTGRES_URL, schema),
        slack: { incidentChannel: 'C0INCIDENT', allowedChannels: ['C0INCIDENT'] },
        roles: { viewer: ['*'], operator: ['U0ALICE', 'U0BOB', 'U0DAN', 'U0ERIN'] },
        // Shared in the store: the two replicas together allow 3 a minute per person.
        rateLimit: { perUserPerMinute: 3 },
        policies: { pause: { role: 'operator', approvals: 1 } },
        escalation: {
          groupBy: 'none',
          // A lease of 1.5 intervals: at 1 s a holder's event loop busy for 1.5 s (its first chart
          // render on a loaded 2-core machine) handed the lease over mid-test, and both had ticked.
          intervalSeconds: 3,
          rules: [
            {
              name: 'replica-backlog',
              queues: ['pushizo/dispatch'],
              metric: 'waiting',
              above: 0,
              severity: 'warning',
            },
          ],
        },
        systems: [
          bullmqSystem('pushizo', redisUrl, prefix, {
            // Queues Dan and Erin ask to pause: the rate limit counts actions that ran.
            queues: ['dispatch', 'd0', 'd1', 'd2', 'd3', 'd4', 'd5', 'e0', 'e1'],
          }),
        ],
      });
      // The second replica starts while the first runs: both migrate the same schema safely.
      await Promise.all([startReplica(apiUrl), startReplica(apiUrl)]);
    }, 90_000);

    afterAll(async () => {
      for (const { child } of replicas) {
        if (child.exitCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }
      }
      await new Promise((resolve) => slack?.close(resolve));
      await deletePrefix(redisUrl, prefix);
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
      rmSync(dir, { recursive: true, force: true });
    });

    it('takes a command at one replica and its approval at the other', async () => {
      const [a, b] = replicas.map((r) => r.port) as [number, number];
      const hooks = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/hooks`;
      const command = slashCommand('pause pushizo/dispatch', '/cmd', { response_url: `${hooks}/cmd` });
      await send(
        a,
        new URLSearchParams(command as Record<string, string>).toString(),
        'application/x-www-form-urlencoded',
      );

      let requestId: string | undefined;
      await waitFor('the request to be posted', async () => {
        requestId = JSON.stringify(posted).match(/r-[a-hj-km-np-z2-9]{8}/)?.[0];
        return requestId !== undefined;
      });

      const click = buttonClick(ActionId.Approve, requestId!, '/click', {
        user: { id: 'U0BOB', username: 'bob', name: 'bob', team_id: 'T0TEAM' },
        response_url: `${hooks}/click`,
      });
      await send(
        b,
        new URLSearchParams({ payload: JSON.stringify(click) }).toString(),
        'application/x-www-form-urlencoded',
      );

      const meta = `${prefix}:dispatch:meta`;
      const { Redis } = await import('ioredis');
      const redis = new Redis(redisUrl);
      try {
        await waitFor(
          'the queue to be paused by the approving replica',
          async () => (await redis.hexists(meta, 'paused')) === 1,
        );
      } finally {
        redis.disconnect();
      }

      const shown = jsonOf(await cli(['--json', 'pending']));
      expect(JSON.stringify(shown.data)).not.toContain(requestId!);
    }, 90_000);

    it('keeps the audit entries both write in one chain that verifies', async () => {
      const verify = await cli(['audit', 'verify']);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      const exported = await cli(['audit', 'export']);
      const entries = exported.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { action: string; actorId: string });
      // The command at replica A, the approval and the action at replica B, in one chain.
      expect(entries.some((e) => e.actorId === 'U0ALICE' && e.action === 'request.created')).toBe(true);
      expect(entries.some((e) => e.actorId === 'U0BOB' && e.action === 'request.approved')).toBe(true);
      expect(entries.some((e) => e.action === 'action.pause')).toBe(true);
    }, 60_000);

    it("counts each person's commands that change things across both replicas: the fourth in a minute is refused in one line, at either one, while someone else's still run", async () => {
      const [a, b] = replicas.map((r) => r.port) as [number, number];
      const hooks = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/hooks`;
      // The answer at the command's response_url, or (a request that was made) its post in the channel.
      const answerTo = async (path: string, target: string) => {
        let text: string | undefined;
        await waitFor(`the answer at ${path}`, async () => {
          text =
            (posted.find((p) => p.path === `/hooks${path}`)?.body.text as string | undefined) ??
            (posted.find(
              (p) =>
                p.path.endsWith('/chat.postMessage') && JSON.stringify(p.body).includes(`pause ${target}`),
            )
              ? `request posted: pause ${target}`
              : undefined);
          return text !== undefined;
        });
        return text!;
      };
      const ask = async (port: number, user: string, text: string, path: string) => {
        const command = slashCommand(text, path, {
          user_id: user,
          user_name: user.toLowerCase(),
          response_url: `${hooks}${path}`,
        });
        await send(
          port,
          new URLSearchParams(command as Record<string, string>).toString(),
          'application/x-www-form-urlencoded',
        );
        return await answerTo(path, text.split(' ')[1] ?? '');
      };
      const refusedLine =
        /^You ran 3 commands that change things in the last minute, the most allowed; `pause` did not run\. Try again in \d+ s\.$/;
      // Dan alternates replicas: A, B, A ask for a pause (each request is made)…
      const dan: string[] = [];
      for (let i = 0; i < 6; i++)
        dan.push(await ask(i % 2 ? b : a, 'U0DAN', `pause pushizo/d${i}`, `/dan-${i}`));
      expect(dan.slice(0, 3)).toEqual([0, 1, 2].map((i) => `request posted: pause pushizo/d${i}`));
      // …then both refuse him: per process each would have allowed 3, 6 in all.
      for (const line of dan.slice(3)) expect(line).toMatch(refusedLine);
      // Erin, asking at the same replicas meanwhile, is not held back by Dan's minute.
      const erin = [
        await ask(b, 'U0ERIN', 'pause pushizo/e0', '/erin-0'),
        await ask(a, 'U0ERIN', 'pause pushizo/e1', '/erin-1'),
      ];
      expect(erin).toEqual([0, 1].map((i) => `request posted: pause pushizo/e${i}`));
      // And read-only commands are never counted.
      expect(await ask(a, 'U0DAN', 'help', '/dan-help')).not.toMatch(/did not run/);
    }, 60_000);

    it('runs the escalation monitor on exactly one of them: one lease holder, one alert post', async () => {
      const alertPosts = () =>
        posted.filter(
          (p) => p.path.endsWith('/chat.postMessage') && JSON.stringify(p.body).includes('replica-backlog'),
        );
      await waitFor('the backlog alert to be posted', async () => alertPosts().length > 0, 20_000);
      // Several more ticks of both replicas: still the one message, updated in place if at all.
      await new Promise((resolve) => setTimeout(resolve, 7000));
      expect(alertPosts()).toHaveLength(1);
      const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
      await client.connect();
      try {
        // The leases name their holder (`bot:<pid>:…`): the monitor's and the limits' (which the
        // leader's limit-expiry takes too) are one of these two processes', and it is the one
        // whose log shows monitor ticks that changed alerts; the other never posted.
        const leases = await client.query<{ name: string; owner: string }>(
          'SELECT name, owner FROM escalation_lease ORDER BY name',
        );
        expect(leases.rows.map((r) => r.name)).toEqual([LIMIT_LEASE, MONITOR_LEASE].sort());
        expect(new Set(leases.rows.map((r) => r.owner)).size).toBe(1);
        const holder = Number(leases.rows[0]!.owner.split(':')[1]);
        const pids = replicas.map((r) => r.child.pid);
        expect(pids).toContain(holder);
        const ticked = replicas.filter((r) => r.output().includes('monitor tick changed alerts'));
        expect(ticked.map((r) => r.child.pid)).toEqual([holder]);
      } finally {
        await client.end();
      }
    }, 60_000);
  });
}
