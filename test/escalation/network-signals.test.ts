import { describe, expect, it } from 'vitest';
import type { NetworkReading } from '../../src/backends/redis-health.js';
import { networkSample } from '../../src/escalation/network.js';
import type { QueueSample, Sample, SystemSample } from '../../src/escalation/samples.js';

/**
 * The signals of `networkSample` that the proxy test (redis-network.test.ts) does not provoke:
 * Celery workers dropping out of `ping` and coming back, silent consumers, refused connections, a
 * slow link; and the bot's own connections never counting. Pure: a reading, a sample, a history.
 */
const T0 = Date.parse('2030-01-01T10:00:00.000Z');
const STEP = 30_000;

const reading = (over: Partial<NetworkReading> = {}): NetworkReading => ({
  rttMs: [0.3, 0.4, 0.5],
  persistence: {} as NetworkReading['persistence'],
  connectionsReceived: 100,
  rejectedConnections: 0,
  connectedClients: 4,
  clients: [
    { id: 1, name: 'queue-ops', ageSeconds: 900 },
    { id: 2, name: '', ageSeconds: 900 },
    { id: 3, name: '', ageSeconds: 900 },
  ],
  ...over,
});

const queue = (fields: Partial<QueueSample> = {}): QueueSample => ({
  name: 'celery:alarm_processing',
  waiting: 0,
  active: 0,
  delayed: 0,
  failed: 0,
  oldestWaitingSeconds: null,
  workers: 2,
  ...fields,
});

const system = (fields: Partial<SystemSample> = {}): SystemSample => ({
  name: 'zeus',
  type: 'celery',
  ok: true,
  workers: ['celery@a|10', 'celery@b|11'],
  queues: [queue()],
  ...fields,
});

/** A history of `n` samples 30 s apart, each system's network taken from `reading(t)`. */
function historyOf(n: number, build: (t: number) => SystemSample): Sample[] {
  const out: Sample[] = [];
  for (let t = 0; t < n; t++) {
    const s = build(t);
    s.network = networkSample(reading({ connectionsReceived: 100 + t }), s, out, T0 + t * STEP);
    out.push({ at: T0 + t * STEP, systems: [s] });
  }
  return out;
}

describe('network signals', () => {
  it('a healthy steady system shows none, whatever the bot itself connects', () => {
    const history = historyOf(3, () => system());
    const now = T0 + 3 * STEP;
    const bot = reading({
      connectionsReceived: 140,
      clients: [...reading().clients!, { id: 50, name: 'queue-ops:pidbox', ageSeconds: 0 }],
    });
    const n = networkSample(bot, system(), history, now);
    expect(n).toMatchObject({ signals: [], reconnects: 0, young: 0, receivedDelta: 38, others: 2 });
    expect(n).toMatchObject({ rttP50Ms: 0.4, rttP95Ms: 0.5, rttMaxMs: 0.5, pings: 3 });
  });

  it('a worker that drops out of ping and comes back under its name', () => {
    const history = historyOf(2, (t) => system(t === 1 ? { workers: ['celery@a|10'] } : {}));
    const n = networkSample(reading(), system(), history, T0 + 2 * STEP);
    expect(n.returned).toBe(1);
    expect(n.signals).toContain('returned');
  });

  it('consumers present, work waiting, nothing done or running for 5 minutes: silent', () => {
    const stalled = (t: number) => system({ queues: [queue({ waiting: 500 + t, throughput: 0 })] });
    const history = historyOf(11, stalled);
    const n = networkSample(reading(), stalled(11), history, T0 + 11 * STEP);
    expect(n).toMatchObject({ silent: 1, silentQueues: ['celery:alarm_processing'] });
    expect(n.signals).toContain('silent');
    // Busy with long tasks is not silent (that is stuck tasks, another cause).
    const busy = system({ queues: [queue({ waiting: 600, throughput: 0, active: 4 })] });
    expect(networkSample(reading(), busy, history, T0 + 11 * STEP).signals).not.toContain('silent');
  });

  it('refused connections and a slow link', () => {
    const history = historyOf(1, () => system());
    const n = networkSample(
      reading({ rejectedConnections: 3, rttMs: [400, 300, 900] }),
      system(),
      history,
      T0 + STEP,
    );
    expect(n.signals).toEqual(['rtt', 'rejected']);
    expect(n).toMatchObject({ rejectedDelta: 3, rttP50Ms: 400, rttMaxMs: 900 });
  });
});
