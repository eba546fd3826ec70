import { webApi } from '@slack/bolt';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequestMessageUpdater } from '../../../src/transports/slack/requests.js';
import { sampleRequest } from '../../store/store-contract.js';
import { memoryLogger } from './harness.js';

const API_HOST = 'https://slack-api.request-updates.test';

/**
 * A request message whose update Slack never took (an outage longer than the client's retries)
 * is not left showing its buttons for good: the bot's sweep sends its latest state again once
 * Slack answers. An answer that will not change (the message is gone) is not asked again.
 */
describe('request message updates through a Slack outage', () => {
  let answers: { status: number; body?: Record<string, unknown> }[];
  let sent: { ts: string; blocks: string }[];
  const log = memoryLogger();

  beforeEach(() => {
    answers = [];
    sent = [];
    nock.disableNetConnect();
    nock(API_HOST)
      .persist()
      .post('/api/chat.update')
      .reply((_uri, raw) => {
        const body = Object.fromEntries(new URLSearchParams(String(raw)));
        sent.push({ ts: body.ts!, blocks: body.blocks! });
        const next = answers.shift() ?? { status: 200 };
        return [next.status, next.body ?? { ok: true, channel: body.channel, ts: body.ts }];
      });
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  const updaterFor = () =>
    createRequestMessageUpdater({
      client: new webApi.WebClient('xoxb-test', {
        slackApiUrl: `${API_HOST}/api/`,
        retryConfig: { retries: 0 },
      }),
      logger: log.logger,
    });
  const done = sampleRequest({
    id: 'r-outage01',
    channel: 'C0OPS',
    messageTs: '1700000000.000100',
    status: 'done',
    approvals: [{ userId: 'U0BOB', userName: 'bob', at: '2030-01-01T00:00:00.000Z' }],
    result: {},
  });

  it('sends the outcome again on the next sweep once Slack answers, and only once', async () => {
    const updater = updaterFor();
    answers.push({ status: 503 });
    await updater.listener(done);
    await updater.idle();
    expect(sent).toHaveLength(1);

    updater.resendFailed();
    await updater.idle();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.ts).toBe('1700000000.000100');
    expect(sent[1]!.blocks).toContain('Approved by bob');

    // Taken: nothing left to send.
    updater.resendFailed();
    await updater.idle();
    expect(sent).toHaveLength(2);
  });

  it('does not ask again when Slack says the message is gone', async () => {
    const updater = updaterFor();
    answers.push({ status: 200, body: { ok: false, error: 'message_not_found' } });
    await updater.listener(done);
    await updater.idle();
    updater.resendFailed();
    await updater.idle();
    expect(sent).toHaveLength(1);
    expect(log.lines.filter((l) => l.msg === 'could not update the request message').at(-1)).toMatchObject({
      slackError: 'message_not_found',
      sentAgain: false,
    });
  });
});
