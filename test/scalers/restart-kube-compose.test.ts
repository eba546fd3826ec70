import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Worker as BullWorker, Queue, Worker } from 'bullmq';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bullmqSystem } from '../helpers/config-file.js';
import { onlyNockBeyondLoopback } from '../helpers/no-network.js';
import { testRedisUrl } from '../helpers/test-redis.js';
import {
  auditEntries,
  json,
  queueOps,
  requestOf,
  shown,
  tempDir,
  writeConfig,
  writeKubeconfig,
} from './helpers.js';

const API = 'http://kube.test:8080';
const TOKEN = 'kube-t0ken-for-restart';
const NS = 'pushizo';
const DEPLOYMENT = 'pushizo-worker-dispatch';
const DEPLOYMENT_PATH = `/apis/apps/v1/namespaces/${NS}/deployments/${DEPLOYMENT}`;
const SCALE_PATH = `${DEPLOYMENT_PATH}/scale`;

const scaleOf = (replicas: number) => ({
  kind: 'Scale',
  apiVersion: 'autoscaling/v1',
  metadata: { name: DEPLOYMENT, namespace: NS },
  spec: { replicas },
  status: { replicas, selector: `app=${DEPLOYMENT}` },
});

/** The deployment mid-rollout or done, as the API server reports it. */
const deploymentOf = (
  generation: number,
  status: { observed: number; replicas: number; updated: number; available: number },
  annotations: Record<string, string> = {},
) => ({
  kind: 'Deployment',
  apiVersion: 'apps/v1',
  metadata: { name: DEPLOYMENT, namespace: NS, generation },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: DEPLOYMENT } },
    template: {
      metadata: { labels: { app: DEPLOYMENT }, annotations },
      spec: { containers: [{ name: 'worker', image: 'pushizo/worker:1.4.2' }] },
    },
  },
  status: {
    observedGeneration: status.observed,
    replicas: status.replicas,
    updatedReplicas: status.updated,
    availableReplicas: status.available,
    readyReplicas: status.available,
  },
});

describe('restart of a Kubernetes worker group, against the API server mocked with nock', () => {
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let env: Record<string, string | undefined>;
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);

  onlyNockBeyondLoopback();
  beforeEach(() => {
    tmp = tempDir('restart-kube');
    const kubeconfig = writeKubeconfig(tmp.dir, { server: API, token: TOKEN, namespace: NS });
    env = { KUBECONFIG: kubeconfig, HOME: tmp.dir, PATH: process.env.PATH };
    config = writeConfig(tmp.dir, {
      approvals: { cliSameOsUser: 'allow' },
      systems: [
        bullmqSystem('pushizo', testRedisUrl(), `qo-restart-kube-${Date.now()}`, {
          queues: ['dispatch-ios'],
          workers: {
            dispatch: {
              type: 'kubernetes',
              namespace: NS,
              deployment: DEPLOYMENT,
              min: 1,
              max: 20,
              workerNames: [],
              restartTimeoutSeconds: 5,
            },
          },
        }),
      ],
    });
  });
  afterEach(() => {
    nock.cleanAll();
    tmp.remove();
  });

  it('previews the rollout of the deployment, patches its restartedAt annotation after approval and follows the rollout to the end', async () => {
    nock(API, { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(SCALE_PATH)
      .reply(200, scaleOf(3));
    const asked = await as('U0ALICE', 'restart', 'pushizo/dispatch');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toBe(
      'restart pushizo/dispatch (Kubernetes): rollout restart of pushizo/pushizo-worker-dispatch (3 replicas): new pods replace the old ones as its strategy allows. Its workers are not checked afterwards (workerNames: []).',
    );
    expect(nock.isDone()).toBe(true);

    let patched: { spec: { template: { metadata: { annotations: Record<string, string> } } } } | undefined;
    const patch = nock(API, {
      reqheaders: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/merge-patch+json' },
    })
      .patch(DEPLOYMENT_PATH, (body) => {
        patched = body;
        return true;
      })
      .reply(200, (_uri, body) =>
        deploymentOf(
          8,
          { observed: 7, replicas: 3, updated: 3, available: 3 },
          (typeof body === 'string' ? JSON.parse(body) : (body as NonNullable<typeof patched>)).spec.template
            .metadata.annotations,
        ),
      );
    // The controller has not seen generation 8 yet, then rolls one pod, then is done.
    const reads = nock(API)
      .get(DEPLOYMENT_PATH)
      .reply(200, deploymentOf(8, { observed: 7, replicas: 3, updated: 3, available: 3 }))
      .get(DEPLOYMENT_PATH)
      .reply(200, deploymentOf(8, { observed: 8, replicas: 4, updated: 1, available: 3 }))
      .get(DEPLOYMENT_PATH)
      .reply(200, deploymentOf(8, { observed: 8, replicas: 3, updated: 3, available: 3 }));
    const before = Date.now();
    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const restartedAt = patched!.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']!;
    expect(restartedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(restartedAt)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Object.keys(patched!)).toEqual(['spec']);
    expect(patch.isDone()).toBe(true);
    expect(reads.isDone()).toBe(true);
    const done = requestOf(approved);
    expect(done.status).toBe('done');
    expect(done.result).toMatchObject({
      type: 'kubernetes',
      targets: [
        { name: 'pushizo/pushizo-worker-dispatch', method: 'rollout', before: 3, after: 3, ok: true },
      ],
      rollout: { desired: 3, updated: 3, available: 3, total: 3, complete: true },
      comeBack: { checked: false },
    });
    expect(shown(approved)).toContain(
      'rollout of pushizo/pushizo-worker-dispatch complete: 3 of 3 pods updated and available. Its workers were not checked (workerNames: []).',
    );
    const entry = (await auditEntries(config, env)).find((e) => e.action === 'action.restart')!;
    expect(entry.params).toMatchObject({ result: { rollout: { complete: true } } });
  }, 60_000);

  it('a rollout still short of its replicas when the timeout passes is answered as not complete, with how far it got', async () => {
    nock(API).get(SCALE_PATH).reply(200, scaleOf(3));
    const pending = requestOf(await as('U0ALICE', 'restart', 'pushizo/dispatch'));
    nock(API)
      .patch(DEPLOYMENT_PATH)
      .reply(200, deploymentOf(9, { observed: 8, replicas: 3, updated: 3, available: 3 }))
      .get(DEPLOYMENT_PATH)
      .times(30)
      .reply(200, deploymentOf(9, { observed: 9, replicas: 4, updated: 1, available: 2 }));
    const approved = await as('U0CAROL', 'approve', pending.id);
    const done = requestOf(approved);
    expect(done.result).toMatchObject({
      targets: [{ ok: false }],
      rollout: { desired: 3, updated: 1, available: 2, total: 4, complete: false },
    });
    expect(shown(approved)).toContain(
      'rollout of pushizo/pushizo-worker-dispatch not complete: 1 of 3 updated, 2 available, 4 pods in all',
    );
  }, 60_000);

  it('a Role without patch on deployments is answered with the verb and resource to grant', async () => {
    nock(API).get(SCALE_PATH).reply(200, scaleOf(3));
    const pending = requestOf(await as('U0ALICE', 'restart', 'pushizo/dispatch'));
    nock(API).patch(DEPLOYMENT_PATH).reply(403, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'forbidden',
      reason: 'Forbidden',
      code: 403,
    });
    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code).toBe(1);
    expect(requestOf(approved).status).toBe('failed');
    expect(shown(approved)).toContain(
      "Kubernetes refused: the bot's service account may not `patch` `deployments` in namespace `pushizo`.",
    );
  }, 60_000);
});

/**
 * A stand-in `docker` on PATH, as the scale tests use (in Python: Node takes an `--env-file` in
 * a script's arguments for its own): records every argument list, answers `compose … ps --format
 * json` with the service's running containers, and for `restart` counts restarts in `restarts`,
 * or fails with the stderr in `fail.txt` when that file exists.
 */
const STAND_IN = `#!/usr/bin/python3
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
with open(os.path.join(here, 'argv.log'), 'a') as log:
    log.write(json.dumps(args) + '\\n')
state = json.load(open(os.path.join(here, 'state.json')))
if 'ps' in args:
    for service, n in state.items():
        for i in range(1, n + 1):
            print(json.dumps({'Name': 'c-%d' % i, 'Service': service, 'State': 'running'}))
    sys.exit(0)
if 'restart' in args:
    fail = os.path.join(here, 'fail.txt')
    if os.path.exists(fail):
        sys.stderr.write(open(fail).read())
        sys.exit(17)
    counter = os.path.join(here, 'restarts')
    count = int(open(counter).read()) if os.path.exists(counter) else 0
    open(counter, 'w').write(str(count + 1))
    sys.exit(0)
sys.exit(2)
`;

/** The test Redis as BullMQ's connection options. */
const redisConnection = () => {
  const url = new URL(testRedisUrl());
  return { host: url.hostname, port: Number(url.port) };
};

describe('restart of a Compose worker group, through a stand-in docker, checked against real BullMQ workers', () => {
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let env: Record<string, string | undefined>;
  let prefix: string;
  let workers: BullWorker[] = [];
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);
  const argvLog = () =>
    readFileSync(join(tmp.dir, 'argv.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);
  const startWorkers = async (names: string[]) => {
    const started = names.map(
      (name) =>
        new Worker('dispatch-ios', async () => undefined, {
          connection: redisConnection(),
          prefix,
          name,
          autorun: true,
        }),
    );
    await Promise.all(started.map((w) => w.waitUntilReady()));
    workers.push(...started);
    return started;
  };

  beforeEach(async () => {
    tmp = tempDir('restart-compose');
    prefix = `qo-restart-compose-${Date.now()}`;
    const docker = join(tmp.dir, 'docker');
    writeFileSync(docker, STAND_IN);
    chmodSync(docker, 0o755);
    writeFileSync(join(tmp.dir, 'argv.log'), '');
    writeFileSync(join(tmp.dir, 'state.json'), JSON.stringify({ 'worker-dispatch': 2 }));
    env = { PATH: `${tmp.dir}:${process.env.PATH}`, HOME: tmp.dir };
    config = writeConfig(tmp.dir, {
      approvals: { cliSameOsUser: 'allow' },
      systems: [
        bullmqSystem('pushizo', testRedisUrl(), prefix, {
          queues: ['dispatch-ios'],
          workers: {
            dispatch: {
              type: 'compose',
              project: 'pushizo',
              file: '/srv/pushizo/compose.yml',
              envFile: '/srv/pushizo/.env',
              service: 'worker-dispatch',
              min: 0,
              max: 8,
              workerNames: ['dispatch-*'],
              restartTimeoutSeconds: 6,
            },
          },
        }),
      ],
    });
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.close(true)));
    workers = [];
    const queue = new Queue('dispatch-ios', { connection: redisConnection(), prefix });
    await queue.obliterate({ force: true });
    await queue.close();
    tmp.remove();
  });

  it('runs docker compose restart with the project, file and env-file scale uses, and names the workers that came back', async () => {
    const old = await startWorkers(['dispatch-1', 'dispatch-2']);
    const asked = await as('U0ALICE', 'restart', 'pushizo/dispatch');
    expect(asked.code, asked.stdout + asked.stderr).toBe(0);
    const pending = requestOf(asked);
    expect(pending.preview).toBe(
      'restart pushizo/dispatch (Compose): docker compose -p pushizo -f /srv/pushizo/compose.yml --env-file /srv/pushizo/.env restart worker-dispatch (2 running containers). Then waits up to 6 s for the workers named dispatch-* to answer again.',
    );
    const base = [
      'compose',
      '-p',
      'pushizo',
      '-f',
      '/srv/pushizo/compose.yml',
      '--env-file',
      '/srv/pushizo/.env',
    ];
    expect(argvLog()).toEqual([[...base, 'ps', '--format', 'json']]);
    // Old enough that a worker started just now could not be taken for one of them.
    await new Promise((resolve) => setTimeout(resolve, 3500));

    // The containers restart: the old workers go, new ones under the same names connect.
    const restarted = (async () => {
      const file = join(tmp.dir, 'restarts');
      for (;;) {
        try {
          readFileSync(file);
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      await Promise.all(old.map((w) => w.close(true)));
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await startWorkers(['dispatch-1', 'dispatch-2']);
    })();
    const approved = await as('U0CAROL', 'approve', pending.id);
    await restarted;
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    expect(argvLog()).toEqual([
      [...base, 'ps', '--format', 'json'],
      [...base, 'restart', 'worker-dispatch'],
      [...base, 'ps', '--format', 'json'],
    ]);
    const done = requestOf(approved);
    expect(done.result).toMatchObject({
      type: 'compose',
      targets: [{ name: 'worker-dispatch', method: 'compose-restart', before: 2, after: 2, ok: true }],
      comeBack: {
        checked: true,
        before: ['dispatch-1', 'dispatch-2'],
        back: ['dispatch-1', 'dispatch-2'],
        missing: [],
        complete: true,
      },
    });
    expect(shown(approved)).toMatch(
      /docker compose restart worker-dispatch: 2 → 2 running containers\. All back within \d+ s \(2 of 2\): dispatch-1, dispatch-2\./,
    );
  }, 60_000);

  it('workers that are not restarted (the same connections) are named as such when the timeout passes', async () => {
    await startWorkers(['dispatch-1']);
    const pending = requestOf(await as('U0ALICE', 'restart', 'pushizo/dispatch'));
    // The stand-in restarts nothing: dispatch-1 keeps its old connection.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(requestOf(approved).result).toMatchObject({
      comeBack: { before: ['dispatch-1'], back: [], notRestarted: ['dispatch-1'], complete: false },
    });
    expect(shown(approved)).toMatch(
      /Not all back after \d+ s: 0 of 1\. Still the same process, not restarted: dispatch-1\./,
    );
  }, 60_000);

  it('a failing docker compose restart is answered with its exit code and stderr, recorded as failed', async () => {
    writeFileSync(join(tmp.dir, 'fail.txt'), 'no such service: worker-dispatch\n');
    const pending = requestOf(await as('U0ALICE', 'restart', 'pushizo/dispatch'));
    const approved = await as('U0CAROL', 'approve', pending.id);
    expect(approved.code).toBe(1);
    expect(requestOf(approved).status).toBe('failed');
    expect(json(approved).error?.message ?? shown(approved)).toContain(
      'docker compose restart exited with 17: no such service: worker-dispatch',
    );
    expect(shown(approved)).toContain('Restarting `pushizo/dispatch` failed');
  }, 60_000);
});
