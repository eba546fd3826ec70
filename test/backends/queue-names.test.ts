import { describe, expect, it } from 'vitest';
import { createQueueNames } from '../../src/backends/queue-names.js';

/**
 * Discovery (a SCAN that walks every key, jobs included) is rationed: only the very first read
 * waits for one; later reads answer from the last one and refresh it in the background once it
 * is older than the TTL, so a status read or a monitor tick never waits on a SCAN.
 */
describe('queue names by discovery', () => {
  function setup() {
    let clock = 0;
    const scans: { resolve: (queues: string[]) => void; reject: (error: Error) => void }[] = [];
    const names = createQueueNames({
      system: 'pushizo',
      discover: () => new Promise<string[]>((resolve, reject) => scans.push({ resolve, reject })),
      now: () => clock,
      ttlMs: 300_000,
    });
    return { names, scans, advance: (ms: number) => (clock += ms) };
  }

  /** `setup()` after its first discovery found `found` (`audience`), then `ms` later. */
  async function discoveredThen(ms: number, found = ['audience']) {
    const state = setup();
    const first = state.names.list();
    state.scans[0]!.resolve(found);
    await first;
    state.advance(ms);
    return state;
  }

  it('the first read waits for a discovery', async () => {
    const { names, scans } = setup();
    const first = names.list();
    expect(scans).toHaveLength(1);
    scans[0]!.resolve(['webhooks', 'audience']);
    expect(await first).toEqual(['audience', 'webhooks']);
  });

  it('reads within the TTL scan nothing', async () => {
    const { names, scans } = await discoveredThen(299_999, ['webhooks', 'audience']);
    expect(await names.list()).toEqual(['audience', 'webhooks']);
    expect(scans).toHaveLength(1);
  });

  it('a stale list answers at once while one background discovery runs, shared by every caller', async () => {
    const { names, scans } = await discoveredThen(300_000);
    // The SCAN never finishes here: the reads still answer.
    expect(await names.list()).toEqual(['audience']);
    expect(await names.list()).toEqual(['audience']);
    expect(scans).toHaveLength(2);
    scans[1]!.resolve(['audience', 'dispatch-ios']);
    await Promise.resolve();
    await Promise.resolve();
    expect(await names.list()).toEqual(['audience', 'dispatch-ios']);
    expect(scans).toHaveLength(2);
  });

  it('a failed background discovery keeps the names it had, and the next read tries again', async () => {
    const { names, scans } = await discoveredThen(300_000);
    expect(await names.list()).toEqual(['audience']);
    scans[1]!.reject(new Error('Redis down'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await names.list()).toEqual(['audience']);
    expect(scans).toHaveLength(3);
  });

  it('a name not known yet is looked for with a discovery waited for, as before', async () => {
    const { names, scans } = await discoveredThen(6_000);
    const resolving = names.resolve(['dispatch-ios']);
    await Promise.resolve();
    expect(scans).toHaveLength(2);
    scans[1]!.resolve(['audience', 'dispatch-ios']);
    expect(await resolving).toEqual(['dispatch-ios']);
  });
});

describe('queue names from config with patterns (`dispatch-*`)', () => {
  function setup(configured?: string[]) {
    const scans: ((queues: string[]) => void)[] = [];
    const names = createQueueNames({
      system: 'pushizo',
      configured,
      patterns: ['dispatch-*'],
      discover: () => new Promise<string[]>((resolve) => scans.push(resolve)),
      now: () => 0,
      ttlMs: 300_000,
    });
    return { names, scans };
  }

  it('are the listed names and the discovered queues a pattern matches, nothing else', async () => {
    const { names, scans } = setup(['scheduler', 'webhooks']);
    const listed = names.list();
    expect(scans).toHaveLength(1);
    scans[0]!(['dispatch-ios', 'reports', 'dispatch-web', 'webhooks']);
    // `scheduler` is listed, so it is the system's even before a job made its keys.
    expect(await listed).toEqual(['dispatch-ios', 'dispatch-web', 'scheduler', 'webhooks']);
  });

  it('a name no pattern or entry covers is unknown, naming the valid ones', async () => {
    const { names, scans } = setup();
    const listed = names.list();
    scans[0]!(['dispatch-ios', 'reports']);
    expect(await listed).toEqual(['dispatch-ios']);
    await expect(names.resolve(['reports'])).rejects.toMatchObject({
      code: 'UnknownQueue',
      params: { queue: 'reports', valid: ['dispatch-ios'] },
    });
  });
});
