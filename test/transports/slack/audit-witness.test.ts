import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/transports/cli/run.js';
import type { RunningBot } from '../../../src/transports/slack/bot.js';
import { bullmqSystem, writeConfigFile } from '../../helpers/config-file.js';
import { memoryLogger, startWiredBot } from './harness.js';

/** Slack's Web API through SLACK_API_URL: posts are kept, and conversations.history serves them back. */
const API_HOST = 'https://slack-witness.test.example';

interface Post {
  ts: string;
  channel: string;
  text: string;
  blocks: string;
  bot_id: string;
  metadata?: unknown;
}
let posts: Post[] = [];
let historyCalls: Record<string, string>[] = [];

function fakeSlack() {
  let ts = 1000;
  nock(API_HOST)
    .persist()
    .post(/^\/api\//)
    .reply((uri, raw) => {
      const method = uri.replace(/^\/api\//, '');
      const body = Object.fromEntries(
        new URLSearchParams(typeof raw === 'string' ? raw : JSON.stringify(raw)),
      );
      if (method === 'chat.postMessage') {
        ts += 1;
        posts.push({
          ts: `1700000000.${ts}`,
          channel: body.channel ?? '',
          text: body.text ?? '',
          blocks: body.blocks ?? '',
          bot_id: 'B0BOT',
          ...(body.metadata ? { metadata: JSON.parse(body.metadata) } : {}),
        });
        return [200, { ok: true, channel: body.channel, ts: `1700000000.${ts}` }];
      }
      if (method === 'auth.test') return [200, { ok: true, bot_id: 'B0BOT', user_id: 'U0BOT' }];
      if (method === 'conversations.history') {
        historyCalls.push(body);
        // Newest first, as Slack answers; someone else's app and a person chatting in between.
        const messages = [
          { ts: '1800000000.1', user: 'U0PERSON', text: 'looking into it' },
          {
            ts: '1800000000.2',
            bot_id: 'B0OTHER',
            metadata: {
              event_type: 'queue_ops_audit_head',
              event_payload: { seq: 999, hash: 'f'.repeat(64) },
            },
          },
          ...posts.filter((p) => p.channel === body.channel).reverse(),
        ];
        return [200, { ok: true, messages, has_more: false }];
      }
      return [200, { ok: false, error: 'unknown_method' }];
    });
}

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  fakeSlack();
});
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe('the audit channel as a witness, on the real bot wiring', () => {
  let dir: string;
  let bot: RunningBot | undefined;
  let logs: ReturnType<typeof memoryLogger>;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'queue-ops-witness-slack-'));
    posts = [];
    historyCalls = [];
    logs = memoryLogger();
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (extraEnv: Record<string, string> = {}) => {
    const configFile = writeConfigFile(dir, {
      systems: [bullmqSystem('pushizo', 'redis://127.0.0.1:1')],
      slack: { auditChannel: 'C0AUDIT' },
      store: `sqlite:${join(dir, 'bot.db')}`,
    });
    const started = await startWiredBot({
      dir,
      configFile,
      token: 'xoxb-witness-test',
      apiUrl: `${API_HOST}/api/`,
      env: extraEnv,
      seams: { logger: logs.logger, auditChannelIntervalMs: 0 },
    });
    bot = started;
    return started;
  };

  const record = async (running: RunningBot, n: number) => {
    for (let i = 0; i < n; i++) {
      await running.runtime.audit.record({
        actorId: 'U0ALICE',
        via: 'slack',
        action: 'command.status',
        outcome: 'ok',
      });
    }
    await running.runtime.audit.flush();
    await running.idle();
  };

  it('posts each entry with its full hash, and verify fails naming the seq once the last two rows are deleted and the head rewound', async () => {
    const running = await start({ QUEUE_OPS_AUDIT_KEY: 'k'.repeat(40) });
    await record(running, 5);
    const entries = await running.runtime.store.listAudit();
    // Entries are posted in batches; every one of them carries its full hash.
    const shown = posts.map((p) => p.blocks).join('\n');
    for (const entry of entries) expect(shown).toContain(`#${entry.seq} · chain ${entry.hash}`);
    const last = entries[4]!;
    expect(posts.at(-1)!.metadata).toEqual({
      event_type: 'queue_ops_audit_head',
      event_payload: { seq: 5, hash: last.hash, at: last.at, keyId: last.keyId },
    });

    const ok = await running.runtime.audit.verifyReport();
    expect(ok.result).toEqual({ ok: true, count: 5 });
    // The other app's post claiming #999 is not this bot's: ignored.
    expect(ok.witnesses).toEqual([{ kind: 'channel', where: 'C0AUDIT', status: 'checked', seq: 5 }]);
    expect(historyCalls[0]).toMatchObject({ channel: 'C0AUDIT', include_all_metadata: 'true' });

    const raw = new Database(join(dir, 'bot.db'));
    raw.prepare('DELETE FROM audit_log WHERE seq > 3').run();
    raw.prepare('UPDATE audit_head SET seq = 3, hash = ? WHERE id = 1').run(entries[2]!.hash);
    raw.close();
    const broken = await running.runtime.audit.verifyReport();
    expect(broken.result).toMatchObject({ ok: false, count: 3, firstBad: { seq: 4 } });
    if (!broken.result.ok) {
      expect(broken.result.firstBad.reason).toBe(
        'entries #4–#5 are missing from the store, but the audit channel C0AUDIT recorded #5 (removed from the end of the log, chain head included)',
      );
    }
  });

  it('the command line checks the audit channel too when SLACK_BOT_TOKEN is set, and exits 1 naming the seq', async () => {
    const key = 'k'.repeat(40);
    const running = await start({ QUEUE_OPS_AUDIT_KEY: key });
    await record(running, 4);
    await running.stop();
    bot = undefined;
    const cli = async () => {
      let stdout = '';
      const code = await runCli({
        argv: ['--config', join(dir, 'queue-ops.yml'), 'audit', 'verify'],
        env: {
          QUEUE_OPS_AUDIT_KEY: key,
          SLACK_BOT_TOKEN: 'xoxb-witness-test',
          SLACK_API_URL: `${API_HOST}/api/`,
        },
        cwd: dir,
        osUser: 'tester',
        logger: logs.logger,
        stdout: (text) => {
          stdout += text;
        },
        stderr: () => {},
      });
      return { code, stdout };
    };
    const ok = await cli();
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toContain('the audit channel C0AUDIT: newest entry #4 matches');

    const raw = new Database(join(dir, 'bot.db'));
    const third = raw.prepare('SELECT hash FROM audit_log WHERE seq = 3').get() as { hash: string };
    raw.prepare('DELETE FROM audit_log WHERE seq > 3').run();
    raw.prepare('UPDATE audit_head SET seq = 3, hash = ? WHERE id = 1').run(third.hash);
    raw.close();
    const broken = await cli();
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('Audit chain broken at entry #4');
    expect(broken.stdout).toContain('the audit channel C0AUDIT recorded #4');
  });

  it('logs one warning at start when the chain is unkeyed, and none with a key', async () => {
    const warnings = () =>
      logs.lines.filter((l) => l.level === 40 && String(l.msg).startsWith('The audit chain is unkeyed'));
    await start();
    expect(warnings()).toHaveLength(1);
    await bot?.stop();
    bot = undefined;
    logs = memoryLogger();
    await start({ QUEUE_OPS_AUDIT_KEY: 'k'.repeat(40) });
    expect(warnings()).toHaveLength(0);
  });
});
