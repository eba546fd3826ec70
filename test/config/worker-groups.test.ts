import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ErrorCode, type OpsError } from '../../src/errors.js';

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, {});
  } catch (error) {
    expect((error as OpsError).code).toBe(ErrorCode.ConfigInvalid);
    return (error as OpsError).params.problems as string[];
  }
  throw new Error('config was accepted');
}

/** The `workers:` example the design asked for, word for word. */
const ISSUE_EXAMPLE = `
systems:
  - name: pushizo
    type: bullmq
    redis: redis://127.0.0.1:6390
    workers:
      dispatch: { type: kubernetes, namespace: pushizo, deployment: pushizo-worker-dispatch, min: 1, max: 20 }
  - name: zeus
    type: celery
    redis: redis://127.0.0.1:6390/1
    workers:
      celery-worker: { type: compose, project: zeus, file: /srv/zeus/docker-compose.yml, service: celery-worker, min: 1, max: 8 }
      pool: { type: celery-pool, min: 2, max: 16 }
`;

describe('worker groups in config', () => {
  it('reads the issue’s example: a Kubernetes group on pushizo, a Compose and a Celery pool group on zeus', () => {
    const config = parseConfig(ISSUE_EXAMPLE, {});
    expect(config.systems[0]!.workers).toEqual({
      dispatch: {
        type: 'kubernetes',
        namespace: 'pushizo',
        deployment: 'pushizo-worker-dispatch',
        min: 1,
        max: 20,
      },
    });
    expect(config.systems[1]!.workers).toEqual({
      'celery-worker': {
        type: 'compose',
        project: 'zeus',
        file: '/srv/zeus/docker-compose.yml',
        service: 'celery-worker',
        min: 1,
        max: 8,
      },
      pool: { type: 'celery-pool', min: 2, max: 16 },
    });
  });

  it('gives revoke and fail their own policies, operator without approval by default', () => {
    const config = parseConfig(ISSUE_EXAMPLE, {});
    expect(config.policies.revoke).toEqual({ role: 'operator', approvals: 0 });
    expect(config.policies.fail).toEqual({ role: 'operator', approvals: 0 });
    expect(config.policies.scale).toEqual({ role: 'operator', approvals: 1 });
  });

  it('refuses a Celery pool group on a BullMQ system, naming what would be valid', () => {
    expect(
      problemsOf(`
systems:
  - name: pushizo
    type: bullmq
    redis: redis://127.0.0.1:6390
    workers:
      c: { type: celery-pool, min: 1, max: 2 }
`),
    ).toEqual([
      'systems[0].workers.c.type: celery-pool groups only exist on celery systems; expected kubernetes or compose',
    ]);
  });

  it('names a group whose type is unknown, whose bounds are reversed, or whose namespace is not a Kubernetes name', () => {
    const problems = problemsOf(`
systems:
  - name: pushizo
    type: bullmq
    redis: redis://127.0.0.1:6390
    workers:
      a: { type: swarm, min: 1, max: 2 }
      b: { type: compose, project: p, file: f.yml, service: s, min: 5, max: 2 }
      d: { type: kubernetes, namespace: Bad_NS, deployment: w, min: 1, max: 2 }
`);
    expect(problems).toContain(
      'systems[0].workers.a.type: expected type: kubernetes, compose or celery-pool',
    );
    expect(problems).toContain('systems[0].workers.b.max: expected min <= max');
    expect(problems).toContain(
      'systems[0].workers.d.namespace: expected a Kubernetes name (lower-case, digits, "-")',
    );
  });
});
