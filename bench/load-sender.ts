/**
 * The load bench's HTTP sender, in a process of its own (forked by bench/load.ts): on the 2-core
 * machine the sender, the Slack stand-in taking 200 answers and the bot each want a core, and a
 * sender sharing its event loop with the stand-in read its acks late whenever answers arrived.
 * Here it does nothing but send and time. Every body is built and signed before the clock starts
 * (Slack's signing is not the bot's time); then all go at once over kept connections.
 *
 * Message in: a {@link SendJob}; message out: a {@link SendResult}. Times are milliseconds since
 * the epoch (`performance.timeOrigin + performance.now()`) so the parent can set them against the
 * answers its stand-in receives.
 */
import { performance } from 'node:perf_hooks';
import { postLocal, signedSlash } from './bot.js';

export interface SendJob {
  port: number;
  /** Signed `/queue status` commands numbered from `n0`, answered on `<slackUrl>/respond/<n>`… */
  slash?: { slackUrl: string; n0: number };
  count: number;
}

export interface SendResult {
  /** When each request's clock started, epoch ms. */
  startedAt: number[];
  /** When its 200 had been read, epoch ms. */
  ackedAt: number[];
}

const now = () => performance.timeOrigin + performance.now();

async function send(job: SendJob): Promise<SendResult> {
  // …or, for the floor, a body of the same size to a server that answers at once.
  const requests = Array.from({ length: job.count }, (_, i) =>
    job.slash ? signedSlash(job.slash.slackUrl, job.slash.n0 + i) : { body: 'x'.repeat(400), headers: {} },
  );
  const startedAt: number[] = [];
  const acks = requests.map(async ({ body, headers }, i) => {
    startedAt[i] = now();
    const status = await postLocal(job.port, '/slack/events', body, headers);
    if (status !== 200) throw new Error(`request ${i} answered ${status}`);
    return now();
  });
  return { startedAt, ackedAt: await Promise.all(acks) };
}

process.on('message', (job: SendJob) => {
  send(job).then(
    (result) => process.send!({ ok: true, result }),
    (error: unknown) => process.send!({ ok: false, error: String(error) }),
  );
});
process.send!('ready');
