import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { celerySystem } from '../helpers/config-file.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import { auditEntries, json, queueOps, requestOf, shown, tempDir, writeConfig } from './helpers.js';

/**
 * A stand-in `docker` on PATH: records every argument list it is started with (one JSON line
 * each), answers `compose … ps --format json` with one JSON object per running container (as
 * Compose 2.21+ prints them), and for `up … --scale <service>=<n>` sets the service to n
 * containers, or fails with the stderr in `fail.txt` when that file exists.
 */
const STAND_IN = `#!/usr/bin/env node
const fs = require('fs');
const path = require('path');
const dir = __dirname;
const args = process.argv.slice(2);
fs.appendFileSync(path.join(dir, 'argv.log'), JSON.stringify(args) + '\\n');
const statePath = path.join(dir, 'state.json');
const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
if (args.includes('ps')) {
  for (const [service, n] of Object.entries(state))
    for (let i = 1; i <= n; i++)
      console.log(JSON.stringify({ Name: 'zeus-' + i, Service: service, State: 'running', Health: '' }));
  console.log(JSON.stringify({ Name: 'zeus-old', Service: Object.keys(state)[0], State: 'exited' }));
  process.exit(0);
}
if (args.includes('up')) {
  if (fs.existsSync(path.join(dir, 'fail.txt'))) {
    process.stderr.write(fs.readFileSync(path.join(dir, 'fail.txt'), 'utf8'));
    process.exit(17);
  }
  const spec = args[args.indexOf('--scale') + 1];
  const eq = spec.lastIndexOf('=');
  state[spec.slice(0, eq)] = Number(spec.slice(eq + 1));
  fs.writeFileSync(statePath, JSON.stringify(state));
  process.exit(0);
}
process.exit(2);
`;

const SERVICE = 'celery worker; touch /tmp/pwned $(id)';

describe('scale of a Compose worker group, through a stand-in docker on PATH', () => {
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let env: Record<string, string | undefined>;
  const argvLog = () =>
    readFileSync(join(tmp.dir, 'argv.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);

  beforeEach(() => {
    tmp = tempDir('compose');
    const docker = join(tmp.dir, 'docker');
    writeFileSync(docker, STAND_IN);
    chmodSync(docker, 0o755);
    writeFileSync(join(tmp.dir, 'argv.log'), '');
    writeFileSync(join(tmp.dir, 'state.json'), JSON.stringify({ [SERVICE]: 2, redis: 1 }));
    env = { PATH: `${tmp.dir}:${process.env.PATH}`, HOME: tmp.dir };
    config = writeConfig(tmp.dir, {
      approvals: { cliSameOsUser: 'allow' },
      policies: { scale: { role: 'operator', approvals: 1 } },
      systems: [
        celerySystem('zeus', `${testRedisUrl()}/15`, {
          queues: ['celery'],
          inspectTimeoutMs: 200,
          workers: {
            'celery-worker': {
              type: 'compose',
              project: 'zeus prod',
              file: '/srv/zeus/docker compose.yml',
              service: SERVICE,
              min: 1,
              max: 8,
            },
          },
        }),
      ],
    });
  });
  afterEach(() => tmp.remove());

  it('previews 2 → 4 running containers, and after approval runs docker compose up with the exact argument list', async () => {
    const asked = await queueOps(
      ['--config', config, '--user', 'U0ALICE', '--json', 'scale', 'zeus/celery-worker', '4'],
      env,
    );
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending).toMatchObject({ action: 'scale', target: 'zeus/celery-worker', status: 'pending' });
    expect(pending.preview).toContain(`${SERVICE} 2 → 4 running containers`);
    // Only the state was read so far.
    const ps = ['compose', '-p', 'zeus prod', '-f', '/srv/zeus/docker compose.yml', 'ps', '--format', 'json'];
    expect(argvLog()).toEqual([ps]);

    const approved = await queueOps(
      ['--config', config, '--user', 'U0CAROL', '--json', 'approve', pending.id],
      env,
    );
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const done = requestOf(approved);
    expect(done.status).toBe('done');
    expect(done.result).toMatchObject({
      type: 'compose',
      replicas: 4,
      targets: [{ name: SERVICE, before: 2, after: 4, ok: true }],
    });
    expect(argvLog()).toEqual([
      ps,
      ps,
      [
        'compose',
        '-p',
        'zeus prod',
        '-f',
        '/srv/zeus/docker compose.yml',
        'up',
        '-d',
        '--no-recreate',
        '--scale',
        `${SERVICE}=4`,
        SERVICE,
      ],
      ps,
    ]);
    expect(shown(approved)).toContain('2 → 4 running containers');

    // The audit keeps what was planned and what really happened.
    const entry = (await auditEntries(config, env)).find((e) => e.action === 'action.scale')!;
    expect(entry.outcome).toBe('done');
    expect(entry.params).toMatchObject({
      replicas: 4,
      planned: { targets: [{ before: 2, after: 4 }] },
      result: { targets: [{ before: 2, after: 4 }] },
    });
  });

  it('shows the group beside the workers with its running containers and bounds', async () => {
    const run = await queueOps(['--config', config, '--json', 'workers', 'zeus'], env);
    const out = json(run);
    const system = (out.data as { systems: { groups: unknown[] }[] }).systems[0]!;
    expect(system.groups).toEqual([
      {
        ok: true,
        system: 'zeus',
        group: 'celery-worker',
        type: 'compose',
        min: 1,
        max: 8,
        targets: [{ name: SERVICE, desired: 2, current: 2 }],
      },
    ]);
    expect(shown(run)).toContain('2 running · bounds 1..8');
  });

  it('a failing docker compose up is answered with its exit code and stderr, and recorded as failed', async () => {
    writeFileSync(join(tmp.dir, 'fail.txt'), 'Error response from daemon: no space left on device\n');
    const asked = await queueOps(
      ['--config', config, '--user', 'U0ALICE', '--json', 'scale', 'zeus/celery-worker', '3'],
      env,
    );
    const approved = await queueOps(
      ['--config', config, '--user', 'U0CAROL', '--json', 'approve', requestOf(asked).id],
      env,
    );
    expect(approved.code).toBe(1);
    const failed = requestOf(approved);
    expect(failed.status).toBe('failed');
    expect(shown(approved)).toContain(
      'docker compose up exited with 17: Error response from daemon: no space left on device',
    );
  });

  it('refuses a count outside the bounds, a count that is not a whole number and an unknown group before running docker', async () => {
    const high = await queueOps(
      ['--config', config, '--user', 'U0ALICE', '--json', 'scale', 'zeus/celery-worker', '9'],
      env,
    );
    expect(high.code).toBe(2);
    expect(json(high).error?.message).toBe('9 is outside the bounds of `zeus/celery-worker`. Valid: 1..8.');
    const half = await queueOps(
      ['--config', config, '--user', 'U0ALICE', '--json', 'scale', 'zeus/celery-worker', '2.5'],
      env,
    );
    expect(json(half).error?.message).toBe('`2.5` is not a whole number of replicas. Valid: 1..8.');
    const unknown = await queueOps(
      ['--config', config, '--user', 'U0ALICE', '--json', 'scale', 'zeus/celery-wrker', '2'],
      env,
    );
    expect(json(unknown).error?.message).toBe(
      '`zeus` has no worker group `celery-wrker`. Did you mean `celery-worker`? Valid: `celery-worker`.',
    );
    expect(argvLog()).toEqual([]);
  });
});
