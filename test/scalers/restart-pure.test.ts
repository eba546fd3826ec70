import { describe, expect, it } from 'vitest';
import { restartOutcome, restartPreview } from '../../src/blocks/restart.js';
import { approvedPlan } from '../../src/commands/restart.js';
import { parseConfig } from '../../src/config/load.js';
import { judgeComeBack, namePattern } from '../../src/scalers/come-back.js';
import { rolloutOf } from '../../src/scalers/kubernetes.js';
import type { RestartReport } from '../../src/scalers/types.js';
import { celerySystem, configYaml } from '../helpers/config-file.js';

describe('the come-back check, judged from two readings', () => {
  const all = () => true;
  /** a, b and c before; 10 s later a answers as a new process, b as the same one, c not at all. */
  const newSameGone = () =>
    judgeComeBack({
      before: [
        { name: 'a', upSeconds: 900 },
        { name: 'b', upSeconds: 900 },
        { name: 'c', upSeconds: 900 },
      ],
      now: [
        { name: 'a', upSeconds: 3 },
        { name: 'b', upSeconds: 910 },
      ],
      elapsedSeconds: 10,
      poolRestarted: new Set(),
      member: all,
    });

  it('a worker that answers as a new process is back', () => {
    expect(newSameGone()).toMatchObject({ back: ['a'], fresh: [] });
  });

  it('one still running since before is not restarted', () => {
    expect(newSameGone()).toMatchObject({ notRestarted: ['b'] });
  });

  it('one gone is missing, and the restart is not complete', () => {
    expect(newSameGone()).toMatchObject({ missing: ['c'], complete: false });
  });

  it('new pods under new names replace the old ones (a Kubernetes rollout), and count for them', () => {
    expect(
      judgeComeBack({
        before: [
          { name: 'celery@pod-old1', upSeconds: 500 },
          { name: 'celery@pod-old2', upSeconds: 500 },
        ],
        now: [
          { name: 'celery@pod-new1', upSeconds: 4 },
          { name: 'celery@pod-new2', upSeconds: 2 },
        ],
        elapsedSeconds: 20,
        poolRestarted: new Set(),
        member: all,
      }),
    ).toMatchObject({ back: [], fresh: ['celery@pod-new1', 'celery@pod-new2'], complete: true });
  });

  /** celery@worker-1 pool-restarted, answering 5 s later from the same process; a beat outside the group. */
  const member = namePattern(['celery@worker-*']);
  const afterPoolRestart = () =>
    judgeComeBack({
      before: [{ name: 'celery@worker-1', upSeconds: 900, poolPids: [11, 12] }],
      now: [
        { name: 'celery@worker-1', upSeconds: 905, poolPids: [11, 12] },
        { name: 'celery@beat-host', upSeconds: 1 },
      ],
      elapsedSeconds: 5,
      poolRestarted: new Set(['celery@worker-1']),
      member,
    });

  it('after pool_restart the worker keeps its process, so answering is enough', () => {
    expect(afterPoolRestart()).toMatchObject({ back: ['celery@worker-1'], complete: true });
  });

  it('workers outside the group are left out', () => {
    expect(afterPoolRestart()).toMatchObject({ fresh: [] });
    expect(member('celery@worker-12')).toBe(true);
    expect(member('celery@worker')).toBe(false);
    expect(namePattern(['a.b'])('aXb')).toBe(false);
  });
});

describe('a rollout as kubectl rollout status judges it', () => {
  const deployment = (
    generation: number,
    observed: number,
    total: number,
    updated: number,
    available: number,
  ) => ({
    metadata: { generation },
    spec: { replicas: 3 },
    status: {
      observedGeneration: observed,
      replicas: total,
      updatedReplicas: updated,
      availableReplicas: available,
    },
  });
  it('is complete only once the new generation is seen, every replica updated and available, and no old pod left', () => {
    expect(rolloutOf(deployment(8, 7, 3, 3, 3)).complete).toBe(false);
    expect(rolloutOf(deployment(8, 8, 4, 3, 3)).complete).toBe(false);
    expect(rolloutOf(deployment(8, 8, 3, 3, 2)).complete).toBe(false);
    expect(rolloutOf(deployment(8, 8, 3, 3, 3))).toEqual({
      desired: 3,
      updated: 3,
      available: 3,
      total: 3,
      complete: true,
    });
  });
});

describe('a stored restart plan read back, and its words', () => {
  const config = parseConfig(
    configYaml({
      systems: [
        celerySystem('zeus', 'redis://127.0.0.1:6390', {
          workers: {
            pool: { type: 'celery-pool', min: 1, max: 4, restartTimeoutSeconds: 30 },
            web: {
              type: 'compose',
              project: 'zeus',
              file: 'c.yml',
              service: 'celery-worker',
              min: 1,
              max: 4,
              workerNames: [],
            },
          },
        }),
      ],
    }),
    {},
  );
  const spec = (group: string) => config.systems[0]!.workers![group]!;

  it('keeps only well-formed Celery targets and takes the timeout and the Compose service from config as it is now', () => {
    const pool = approvedPlan(
      {
        targets: [
          { name: 'celery@a', method: 'pool_restart' },
          { name: 'celery@b', method: 'rm -rf' },
          { name: 'celery@c', method: 'shutdown', reason: 'poolRestartsOff' },
        ],
        timeoutSeconds: 600,
      },
      { system: 'zeus', group: 'pool', spec: spec('pool') },
    );
    expect(pool).toEqual({
      system: 'zeus',
      group: 'pool',
      type: 'celery-pool',
      timeoutSeconds: 30,
      targets: [
        { name: 'celery@a', method: 'pool_restart' },
        { name: 'celery@c', method: 'shutdown', reason: 'poolRestartsOff' },
      ],
    });
    const web = approvedPlan(
      { targets: [{ name: 'other-service', before: 2 }] },
      { system: 'zeus', group: 'web', spec: spec('web') },
    );
    expect(web.targets).toEqual([{ name: 'celery-worker', method: 'compose-restart', before: 2 }]);
    expect(web.workerNames).toEqual([]);
  });

  it('says in Turkish what will run and who came back', () => {
    const plan = approvedPlan(
      { targets: [{ name: 'celery@a', method: 'shutdown' }] },
      { system: 'zeus', group: 'pool', spec: spec('pool') },
    );
    expect(restartPreview(plan, 'tr')).toBe(
      "restart zeus/pool (Celery pool): celery@a için shutdown; supervisor'ları onları yeniden başlatır. Sonra yeniden yanıt vermelerini en çok 30 sn bekler.",
    );
    const report: RestartReport = {
      ...plan,
      targets: [{ name: 'celery@a', method: 'shutdown', answer: 'shutdown sent', ok: true }],
      comeBack: {
        checked: true,
        before: ['celery@a'],
        back: [],
        fresh: [],
        notRestarted: [],
        missing: ['celery@a'],
        complete: false,
        waitedSeconds: 30,
      },
    };
    expect(restartOutcome(report, 'tr')).toBe(
      "celery@a: shutdown gönderildi. 30 sn sonunda hepsi geri gelmedi: 1 worker'dan 0 tanesi. Geri gelmeyen: celery@a. Grubun hiçbir worker'ı şu an yanıt vermiyor: iş bekledikçe kuyrukları için no-workers alarmı çalar.",
    );
  });
});
