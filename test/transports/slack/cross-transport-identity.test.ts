import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import nock from 'nock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestStatus } from '../../../src/store/store.js';
import type { RunningBot } from '../../../src/transports/slack/bot.js';
import { connectionFor, deletePrefix } from '../../helpers/bullmq-jobs.js';
import { jsonOf, requestOf, runCli } from '../../helpers/cli-run.js';
import { testRedisUrl } from '../../helpers/test-redis.js';
import { botConfigInput, captureResponses, randomId, slashCommand, startWiredBot } from './harness.js';

/**
 * Two-person approval across Slack and the command line. The bot runs as
 * `npm start` builds it, over a SQLite store; the command line is the real `bin/queue-ops.js`,
 * run as this machine's OS account against the same config file and store. Only Slack is nock'd.
 */
const API_HOST = 'https://slack-identity.test.example';
const API_URL = `${API_HOST}/api/`;
/** The OS account every command line here runs as. */
const ME = userInfo().username;
const STEP_MS = 120_000;

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  let ts = 100;
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw) => {
      const method = uri.replace(/^\/api\//, '');
      const body = Object.fromEntries(new URLSearchParams(typeof raw === 'string' ? raw : ''));
      if (method === 'chat.postMessage') {
        ts += 1;
        return [200, { ok: true, channel: body.channel, ts: `1700000300.${String(ts).padStart(6, '0')}` }];
      }
      if (method === 'chat.update') return [200, { ok: true, channel: body.channel, ts: body.ts }];
      if (method === 'views.publish') return [200, { ok: true }];
      return [200, { ok: false, error: 'unknown_method' }];
    });
});
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

const users = {
  alice: { id: 'U0ALICE', name: 'alice' },
  bob: { id: 'U0BOB', name: 'bob' },
} as const;

/** A bot whose config has `cliUsers` as `cli.users`, and three jobs in each of `queueNames`. */
function describeWithBot(
  title: string,
  cliUsers: Record<string, string[]>,
  queueNames: readonly string[],
  body: (env: {
    bot: () => RunningBot;
    queue: (name: string) => Queue;
    slash: (who: keyof typeof users, text: string) => Promise<string>;
    cli: (user: string, ...words: string[]) => ReturnType<typeof runCli>;
    pendingFor: (queueName: string) => Promise<string>;
  }) => void,
): void {
  describe(title, () => {
    const url = testRedisUrl();
    const prefix = randomId('xid');
    const dir = mkdtempSync(join(tmpdir(), 'queue-ops-cross-identity-'));
    const configFile = join(dir, 'queue-ops.yml');
    const queues = new Map<string, Queue>();
    let bot: RunningBot;

    beforeAll(async () => {
      for (const name of queueNames) {
        const queue = new Queue(name, { connection: connectionFor(url), prefix });
        await queue.addBulk([1, 2, 3].map((n) => ({ name: 'deliver.apns', data: { n } })));
        queues.set(name, queue);
      }
      bot = await startWiredBot({
        dir,
        config: botConfigInput({
          redis: url,
          prefix,
          dir,
          policies: { pause: { role: 'operator', approvals: 1 }, purge: { role: 'operator', approvals: 1 } },
          more: { archive: { dir: join(dir, 'archive') }, cli: { users: cliUsers } },
        }),
        token: 'xoxb-identity-test',
        apiUrl: API_URL,
        seams: { auditChannelIntervalMs: 0 },
      });
    }, STEP_MS);

    afterAll(async () => {
      await bot?.stop();
      for (const queue of queues.values()) await queue.close();
      await deletePrefix(url, prefix);
      rmSync(dir, { recursive: true, force: true });
    });

    body({
      bot: () => bot,
      queue: (name) => queues.get(name) as Queue,
      /** `/queue <text>` typed by `who` in C0INCIDENT: the text of the answer they see. */
      async slash(who, text) {
        const path = `/commands/T0TEAM/${randomId('')}/cmd`;
        const answered = captureResponses(path);
        await bot.slack.app.processEvent({
          body: slashCommand(text, path, { user_id: users[who].id, user_name: users[who].name }),
          ack: async () => {},
        });
        return answered.bodies.map((b) => `${String(b.text)}\n${JSON.stringify(b.blocks ?? [])}`).join('\n');
      },
      cli: (user, ...words) => runCli(['--config', configFile, '--user', user, '--json', ...words]),
      async pendingFor(queueName) {
        const request = (await bot.runtime.approvals.pending()).find(
          (r) => r.target === `pushizo/${queueName}`,
        );
        if (!request) throw new Error(`no pending request for ${queueName}`);
        return request.id;
      },
    });
  });
}

describeWithBot(
  'cli.users does not bind the OS account at the shell: its --user counts for nothing against Slack',
  { 'someone-else': ['U0DAVE'] },
  ['q-purge', 'q-cli-ask'],
  ({ bot, queue, slash, cli, pendingFor }) => {
    it(
      'Alice asks for a purge in Slack; `--user U0BOB approve` from her shell is refused in one line naming cli.users, nothing is purged, and Bob can still approve it in Slack',
      async () => {
        await slash('alice', 'purge pushizo/q-purge');
        const id = await pendingFor('q-purge');

        // An id cli.users binds to another account is not this shell's to claim at all.
        const taken = await cli('U0DAVE', 'approve', id);
        expect(taken.code, taken.stderr).toBe(1);
        expect(jsonOf(taken).error?.message).toBe(
          `\`U0DAVE\` belongs to OS user \`someone-else\` (\`cli.users\`), so OS user \`${ME}\` cannot act as it; nothing was done.`,
        );

        const claimed = await cli('U0BOB', 'approve', id);
        expect(claimed.code, claimed.stderr).toBe(1);
        const error = jsonOf(claimed).error!;
        expect(error.code).toBe('IdentityNotBound');
        expect(error.message).toBe(
          `\`--user U0BOB\` is only a claim: OS user \`${ME}\` is not bound to it in \`cli.users\`, and \`${id}\` was asked or approved in Slack; nothing was changed. Answer it in Slack, or bind the account in \`cli.users\`.`,
        );
        expect(await queue('q-purge').getWaitingCount()).toBe(3);
        expect((await bot().runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);

        // Denying is answering too: neither Bob's nor Alice's own id (a withdrawal) is taken on trust.
        for (const user of ['U0BOB', 'U0ALICE']) {
          const denied = await cli(user, 'deny', id);
          expect(denied.code, denied.stdout).toBe(1);
          expect(jsonOf(denied).error?.code).toBe('IdentityNotBound');
        }
        expect((await bot().runtime.approvals.get(id))?.status).toBe(RequestStatus.Pending);

        // The trail says who really typed the refused approval, and that U0BOB was only claimed.
        const entries = await bot().runtime.store.listAudit();
        const refused = entries.find(
          (e) => e.action === 'request.approve' && (e.params as { request?: string }).request === id,
        );
        expect(refused).toMatchObject({
          actorId: 'U0BOB',
          via: 'cli',
          outcome: 'rejected',
          error: 'IdentityNotBound',
          params: { osUser: ME, identity: 'claimed' },
        });
        // So does the entry of the command itself.
        const typed = entries.find((e) => e.action === 'command.approve' && e.via === 'cli');
        expect(typed?.params).toMatchObject({ osUser: ME, host: hostname(), identity: 'claimed' });

        expect(await slash('bob', `approve ${id}`)).not.toContain('IdentityNotBound');
        expect((await bot().runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
        expect(await queue('q-purge').getWaitingCount()).toBe(0);
      },
      STEP_MS,
    );

    it(
      'a pause asked from that shell as U0ALICE is refused when Bob approves it in Slack, naming cli.users; it does not run',
      async () => {
        const asked = await cli('U0ALICE', 'pause', 'pushizo/q-cli-ask');
        expect(asked.code, asked.stderr).toBe(0);
        const request = requestOf(asked);
        expect(request.status).toBe('pending');

        const answer = await slash('bob', `approve ${request.id}`);
        expect(answer).toContain(
          `was asked on the command line by OS user \`${ME}\` as \`U0ALICE\`, which \`cli.users\` does not bind, so it cannot be approved from Slack`,
        );
        expect(await queue('q-cli-ask').isPaused()).toBe(false);
        expect((await bot().runtime.approvals.get(request.id))?.status).toBe(RequestStatus.Pending);
        const entries = await bot().runtime.store.listAudit();
        const created = entries.find(
          (e) => e.action === 'request.created' && (e.params as { request?: string }).request === request.id,
        );
        expect(created?.params).toMatchObject({ osUser: ME, identity: 'claimed' });
      },
      STEP_MS,
    );
  },
);

describeWithBot(
  'cli.users binds the OS account at the shell to U0BOB (and U0BOB2): it is Bob, on both sides',
  { [ME]: ['U0BOB', 'U0BOB2'] },
  ['q-bound', 'q-bob-asks'],
  ({ bot, queue, slash, cli, pendingFor }) => {
    it(
      'Alice asks for a purge in Slack and Bob approves it from his bound shell: it runs, and the audit says bound',
      async () => {
        await slash('alice', 'purge pushizo/q-bound');
        const id = await pendingFor('q-bound');
        const approved = await cli('U0BOB', 'approve', id);
        expect(approved.code, approved.stdout + approved.stderr).toBe(0);
        expect(requestOf(approved)).toMatchObject({ status: 'done', approvals: ['U0BOB'] });
        expect(await queue('q-bound').getWaitingCount()).toBe(0);
        const entries = await bot().runtime.store.listAudit();
        const approval = entries.find(
          (e) => e.action === 'request.approved' && (e.params as { request?: string }).request === id,
        );
        expect(approval).toMatchObject({
          actorId: 'U0BOB',
          via: 'cli',
          params: { osUser: ME, identity: 'bound' },
        });
        const typed = entries.find((e) => e.action === 'command.approve' && e.via === 'cli');
        expect(typed?.params).toMatchObject({ osUser: ME, identity: 'bound' });
      },
      STEP_MS,
    );

    it(
      "Bob asks from his bound shell: his own Slack approval is a self-approval, so is his shell's second id; Alice's Slack approval runs it",
      async () => {
        const asked = await cli('U0BOB', 'pause', 'pushizo/q-bob-asks');
        expect(asked.code, asked.stderr).toBe(0);
        const id = requestOf(asked).id;
        expect(await slash('bob', `approve ${id}`)).toContain(
          `You asked for \`${id}\` yourself; someone else has to approve it.`,
        );
        expect(await queue('q-bob-asks').isPaused()).toBe(false);
        // The same OS account as another of its ids is still Bob (the OS-account rule says so too).
        const second = await cli('U0BOB2', 'approve', id);
        expect(jsonOf(second).error?.code).toBe('SelfApproval');
        expect(await queue('q-bob-asks').isPaused()).toBe(false);

        await slash('alice', `approve ${id}`);
        expect((await bot().runtime.approvals.get(id))?.status).toBe(RequestStatus.Done);
        expect(await queue('q-bob-asks').isPaused()).toBe(true);
      },
      STEP_MS,
    );

    it(
      'Alice asks in Slack, and the bound shell approving as U0BOB2 is still Bob, not a stranger',
      async () => {
        await slash('alice', 'pause pushizo/q-bound');
        const id = await pendingFor('q-bound');
        // Not refused as unbound: U0BOB2 is one of this account's ids (U0BOB2 holds no role here).
        const run = await cli('U0BOB2', 'approve', id);
        expect(jsonOf(run).error?.code).toBe('Forbidden');
      },
      STEP_MS,
    );

    it(
      'the bound account claiming an id it is not bound to is refused for any command, in one line naming cli.users',
      async () => {
        for (const words of [['status'], ['pending']]) {
          const run = await cli('U0ALICE', ...words);
          expect(run.code, run.stdout).toBe(1);
          const error = jsonOf(run).error!;
          expect(error.code).toBe('IdentityNotBound');
          expect(error.message).toBe(
            `OS user \`${ME}\` is bound to \`U0BOB\`, \`U0BOB2\` in \`cli.users\`, so it cannot act as \`U0ALICE\`; nothing was done.`,
          );
        }
        const entries = await bot().runtime.store.listAudit();
        expect(entries.at(-1)).toMatchObject({
          actorId: 'U0ALICE',
          via: 'cli',
          action: 'denied',
          outcome: 'denied',
          params: { code: 'IdentityNotBound', details: { osUser: ME, user: 'U0ALICE' } },
        });
      },
      STEP_MS,
    );
  },
);
