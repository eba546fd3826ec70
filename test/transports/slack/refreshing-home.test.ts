import { describe, expect, it } from 'vitest';
import type { ChartFile, SlackSender } from '../../../src/escalation/outbox-contract.js';
import { refreshingHome } from '../../../src/transports/slack/bot.js';

const message = { text: 'CRITICAL: backlog', blocks: [] };
const chart: ChartFile = { filename: 'chart.png', title: 'chart', content: Buffer.from('png') };

/** A sender as a class: its methods live on the prototype, where an object spread does not look. */
class RecordingSender implements SlackSender {
  constructor(private readonly calls: string[]) {}
  async post(channel: string) {
    this.calls.push(`post ${channel}`);
    return { channel, ts: '1.000001' };
  }
  async update(channel: string, ts: string) {
    this.calls.push(`update ${channel} ${ts}`);
  }
  async findAlertPost(channel: string, alertId: string) {
    this.calls.push(`findAlertPost ${channel} ${alertId}`);
    return '1.000001';
  }
  async upload(channel: string, threadTs: string, file: ChartFile) {
    this.calls.push(`upload ${channel} ${threadTs} ${file.filename}`);
  }
}

describe("the bot's Slack sender that refreshes Home tabs (refreshingHome)", () => {
  it.each([
    [
      'a plain object',
      (calls: string[]): SlackSender => ({
        post: async (channel) => {
          calls.push(`post ${channel}`);
          return { channel, ts: '1.000001' };
        },
        update: async (channel, ts) => {
          calls.push(`update ${channel} ${ts}`);
        },
        findAlertPost: async (channel, alertId) => {
          calls.push(`findAlertPost ${channel} ${alertId}`);
          return '1.000001';
        },
        upload: async (channel, threadTs, file) => {
          calls.push(`upload ${channel} ${threadTs} ${file.filename}`);
        },
      }),
    ],
    ['a class instance', (calls: string[]): SlackSender => new RecordingSender(calls)],
  ])(
    'passes findAlertPost and upload of %s on, and refreshes after each post and update only',
    async (_, make) => {
      const calls: string[] = [];
      let refreshes = 0;
      const sender = refreshingHome(make(calls), () => {
        refreshes++;
      });

      expect(await sender.findAlertPost?.('C0INCIDENT', 'a-1', '2026-01-01T00:00:00Z')).toBe('1.000001');
      await sender.upload?.('C0INCIDENT', '1.000001', chart);
      expect(refreshes).toBe(0);
      expect(await sender.post('C0INCIDENT', message, undefined, 'a-1')).toEqual({
        channel: 'C0INCIDENT',
        ts: '1.000001',
      });
      await sender.update('C0INCIDENT', '1.000001', message);
      expect(refreshes).toBe(2);
      expect(calls).toEqual([
        'findAlertPost C0INCIDENT a-1',
        'upload C0INCIDENT 1.000001 chart.png',
        'post C0INCIDENT',
        'update C0INCIDENT 1.000001',
      ]);
    },
  );

  it('passes on a method the sender gains later without being told of it', async () => {
    const calls: string[] = [];
    const sender = Object.assign(new RecordingSender(calls), {
      async react(channel: string) {
        calls.push(`react ${channel}`);
      },
    });
    const wrapped = refreshingHome(sender, () => {}) as SlackSender & {
      react?: (channel: string) => Promise<void>;
    };
    await wrapped.react?.('C0INCIDENT');
    expect(calls).toEqual(['react C0INCIDENT']);
  });

  it('leaves out what the sender does not have (a sender that cannot upload stays one)', () => {
    const sender = refreshingHome(
      { post: async (channel) => ({ channel, ts: '1.000001' }), update: async () => {} },
      () => {},
    );
    expect(sender.upload).toBeUndefined();
    expect(sender.findAlertPost).toBeUndefined();
  });
});
