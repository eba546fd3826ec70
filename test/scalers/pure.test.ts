import { describe, expect, it } from 'vitest';
import { poolOfStats } from '../../src/backends/celery/control.js';
import { parseRevokeArgs } from '../../src/commands/revoke.js';
import { selectStuck } from '../../src/commands/stuck.js';
import { OpsError } from '../../src/errors.js';
import { parsePs } from '../../src/scalers/compose.js';
import { planScale } from '../../src/scalers/types.js';
import { parseCliArgs } from '../../src/transports/cli/args.js';

describe('the pure parts of scale, stuck and revoke', () => {
  it('reads docker compose ps --format json both as a JSON array (Compose < 2.21) and as JSON lines', () => {
    const entry = { Name: 'zeus-celery-worker-1', Service: 'celery-worker', State: 'running' };
    expect(parsePs(JSON.stringify([entry, entry]))).toHaveLength(2);
    expect(parsePs(`${JSON.stringify(entry)}\n${JSON.stringify(entry)}\n`)).toHaveLength(2);
    expect(parsePs('')).toEqual([]);
  });

  it('lists stuck work longest first: older than the threshold, or with an expired lock whatever its age', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    const work = [
      { id: 'young', name: 'a', startedAt: now - 60_000 },
      { id: 'old', name: 'b', startedAt: now - 45 * 60_000 },
      { id: 'older', name: 'c', startedAt: now - 90 * 60_000 },
      { id: 'stalled', name: 'd', startedAt: now - 5_000, lockExpired: true },
      { id: 'unknown-start', name: 'e' },
    ];
    expect(selectStuck(work, 30, now).map((w) => w.id)).toEqual(['older', 'old', 'stalled']);
    expect(selectStuck(work, 0, now).map((w) => w.id)).toEqual([
      'older',
      'old',
      'young',
      'stalled',
      'unknown-start',
    ]);
  });

  it('plans an autoscaling Celery worker as a new autoscale floor (the ceiling rises only when below)', () => {
    const state = {
      system: 'zeus',
      group: 'pool',
      type: 'celery-pool' as const,
      min: 2,
      max: 16,
      targets: [
        { name: 'celery@a', desired: 3, current: 3, autoscale: { min: 2, max: 8 } },
        { name: 'celery@b', desired: 2, current: 2 },
      ],
    };
    expect(planScale(state, 10).targets).toEqual([
      {
        name: 'celery@a',
        before: 3,
        after: 10,
        autoscale: { before: { min: 2, max: 8 }, after: { min: 10, max: 10 } },
      },
      { name: 'celery@b', before: 2, after: 10 },
    ]);
    expect(
      poolOfStats('celery@a', { pool: { processes: [1, 2, 3] }, autoscaler: { max: 8, min: 2, qty: 0 } }),
    ).toEqual({
      worker: 'celery@a',
      processes: 3,
      autoscale: { max: 8, min: 2 },
    });
  });

  it('parses revoke’s flags anywhere after the system and refuses what celery control would not do', () => {
    expect(parseRevokeArgs(['zeus', 'id-1', '--terminate', 'id-2', '--signal=sigkill'])).toEqual({
      system: 'zeus',
      ids: ['id-1', 'id-2'],
      terminate: true,
      signal: 'KILL',
    });
    expect(parseRevokeArgs(['zeus', 'id-1'])).toMatchObject({ terminate: false, signal: 'TERM' });
    expect(() => parseRevokeArgs(['zeus', 'id-1', '--signal', 'KILL'])).toThrow(OpsError);
    expect(() => parseRevokeArgs(['zeus'])).toThrow(OpsError);
    expect(() => parseRevokeArgs(['zeus', 'id;rm'])).toThrow(OpsError);
  });

  it('the command line hands options it does not know to the command when they follow the verb', () => {
    expect(
      parseCliArgs(['--json', 'revoke', 'zeus', 'abc', '--terminate', '--signal', 'KILL']).words,
    ).toEqual(['revoke', 'zeus', 'abc', '--terminate', '--signal', 'KILL']);
    expect(parseCliArgs(['status', '--json']).json).toBe(true);
    expect(() => parseCliArgs(['--terminate', 'revoke'])).toThrow(OpsError);
  });
});
