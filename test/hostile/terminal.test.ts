import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFor, deletePrefix, randomName, waitFor } from '../helpers/bullmq-jobs.js';
import { runCli, tempDir } from '../helpers/cli-run.js';
import { bullmqSystem, writeConfigFile } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';

/**
 * Terminal control sequences in what the command line prints as text. A job's name and its failure
 * reason are anyone's who can enqueue a job: ESC sequences there would clear the operator's screen,
 * set the window title or hide a link (OSC 8), and a carriage return would write over the line.
 * The text output shows each C0/C1 control as typed input is shown (`\u001b`, `\r`), and keeps
 * only its own line breaks.
 */
const CLEAR_AND_TITLE = '\x1b[2J\x1b[H\x1b]0;owned\x07';
const C1_CSI = '\u009b31m';
const NAME = `push${CLEAR_AND_TITLE}${C1_CSI}`;
const REASON = 'APNs down \x1b]8;;https://evil.example\x07details\x1b]8;;\x07\rall good, nothing failed';
/** Any C0 or C1 control but the line feed. */
const RAW_CONTROL = /[^\P{Cc}\n]/u;

describe('job names and failure reasons with terminal controls, printed by bin/queue-ops.js', () => {
  const url = testRedisUrl();
  const prefix = randomName('qo-term');
  const queueName = 'notify';
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let queue: Queue;
  let holder: Worker;
  let release: () => void = () => {};

  beforeAll(async () => {
    tmp = tempDir('terminal');
    config = writeConfigFile(tmp.dir, {
      store: `sqlite:${tmp.dir}/queue-ops.db`,
      systems: [bullmqSystem('pushizo', url, prefix)],
    });
    const connection = connectionFor(url);
    queue = new Queue(queueName, { prefix, connection });
    // Two real failures, by a real worker whose processor throws the hostile reason.
    await queue.addBulk([1, 2].map((n) => ({ name: NAME, data: { n }, opts: { attempts: 1 } })));
    const failer = new Worker(
      queueName,
      async () => {
        throw new Error(REASON);
      },
      { prefix, connection },
    );
    await waitFor('both jobs to fail', async () => (await queue.getFailedCount()) === 2);
    await failer.close();
    // One held active, for `stuck`.
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    holder = new Worker(queueName, () => held, { prefix, connection });
    holder.on('error', () => {});
    await queue.add(NAME, { n: 3 });
    await waitFor('a job to be active', async () => (await queue.getActiveCount()) === 1);
  }, 60_000);

  afterAll(async () => {
    release();
    await holder?.close(true);
    await queue?.close();
    await deletePrefix(url, prefix);
    tmp?.remove();
  });

  it('dlq shows the names and reasons with their controls visible, none of them raw', async () => {
    const run = await runCli(['--config', config, 'dlq', `pushizo/${queueName}`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('push\\u001b[2J\\u001b[H\\u001b]0;owned\\u0007\\u009b31m');
    expect(run.stdout).toContain(
      'APNs down \\u001b]8;;https://evil.example\\u0007details\\u001b]8;;\\u0007\\rall good, nothing failed',
    );
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stderr).not.toMatch(RAW_CONTROL);
  });

  it('stuck shows an active job’s name with its controls visible', async () => {
    const run = await runCli(['--config', config, 'stuck', 'pushizo', '0']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('push\\u001b[2J\\u001b[H\\u001b]0;owned\\u0007\\u009b31m');
    expect(run.stdout).not.toMatch(RAW_CONTROL);
  });

  it('--json carries the name and reason as they are, every control escaped (C1 too)', async () => {
    const run = await runCli(['--config', config, '--json', 'dlq', `pushizo/${queueName}`]);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    const data = JSON.parse(run.stdout) as { data: { jobs: { name: string; error: string }[] } };
    expect(data.data.jobs.map((j) => [j.name, j.error])).toEqual([
      [NAME, REASON],
      [NAME, REASON],
    ]);
  });
});
