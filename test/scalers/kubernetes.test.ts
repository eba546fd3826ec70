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

// client-node 1.x speaks plain HTTP to nock only with insecure-skip-tls-verify set.
const API = 'http://kube.test:8080';
const TOKEN = 'kube-t0ken-for-tests';
const NS = 'pushizo';
const DEPLOYMENT = 'pushizo-worker-dispatch';
const SCALE_PATH = `/apis/apps/v1/namespaces/${NS}/deployments/${DEPLOYMENT}/scale`;
const DEPLOYMENT_PATH = `/apis/apps/v1/namespaces/${NS}/deployments/${DEPLOYMENT}`;
const HPA_PATH = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;
const KEDA_PATH = `/apis/keda.sh/v1alpha1/namespaces/${NS}/scaledobjects`;

/** The Scale subresource as the API server returns it (autoscaling/v1 Scale). */
const scaleOf = (replicas: number, current = replicas) => ({
  kind: 'Scale',
  apiVersion: 'autoscaling/v1',
  metadata: {
    name: DEPLOYMENT,
    namespace: NS,
    uid: 'a1b2',
    resourceVersion: '4711',
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  spec: { replicas },
  status: { replicas: current, selector: 'app=pushizo-worker-dispatch' },
});

/** The deployment as the API server returns it, trimmed to what a reader looks at. */
const deploymentOf = (replicas: number, ready: number) => ({
  kind: 'Deployment',
  apiVersion: 'apps/v1',
  metadata: { name: DEPLOYMENT, namespace: NS, uid: 'a1b2', resourceVersion: '4711', generation: 7 },
  spec: {
    replicas,
    selector: { matchLabels: { app: DEPLOYMENT } },
    template: {
      metadata: { labels: { app: DEPLOYMENT } },
      spec: { containers: [{ name: 'worker', image: 'pushizo/worker:1.4.2' }] },
    },
  },
  status: {
    observedGeneration: 7,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: ready,
    availableReplicas: ready,
    unavailableReplicas: replicas - ready,
  },
});

const hpa = (name: string, target: string, min: number, max: number) => ({
  metadata: { name, namespace: NS, resourceVersion: '90' },
  spec: {
    scaleTargetRef: { kind: 'Deployment', name: target, apiVersion: 'apps/v1' },
    minReplicas: min,
    maxReplicas: max,
    metrics: [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
      },
    ],
  },
  status: { currentReplicas: 3, desiredReplicas: 3, currentMetrics: [], conditions: [] },
});

const hpaList = (...items: unknown[]) => ({
  kind: 'HorizontalPodAutoscalerList',
  apiVersion: 'autoscaling/v2',
  metadata: { resourceVersion: '91' },
  items,
});

const status = (code: number, reason: string, message: string, kind = 'deployments', group = 'apps') => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  details: { name: DEPLOYMENT, group, kind },
  code,
});

/** A cluster without KEDA answers 404 for its API group. */
const noKeda = () =>
  nock(API)
    .get(KEDA_PATH)
    .reply(
      404,
      status(404, 'NotFound', 'the server could not find the requested resource', 'scaledobjects', 'keda.sh'),
    );

describe('scale of a Kubernetes worker group, against the API server mocked with nock', () => {
  let tmp: ReturnType<typeof tempDir>;
  let config: string;
  let env: Record<string, string | undefined>;
  const as = (user: string, ...words: string[]) =>
    queueOps(['--config', config, '--user', user, '--json', ...words], env);

  onlyNockBeyondLoopback();

  beforeEach(() => {
    tmp = tempDir('kube');
    const kubeconfig = writeKubeconfig(tmp.dir, { server: API, token: TOKEN, namespace: NS });
    // KUBECONFIG is read from the environment the command line was started with, and only there.
    env = { KUBECONFIG: kubeconfig, HOME: tmp.dir, PATH: process.env.PATH };
    config = writeConfig(tmp.dir, {
      policies: { scale: { role: 'operator', approvals: 0 } },
      systems: [
        bullmqSystem('pushizo', testRedisUrl(), `qo-kube-${Date.now()}`, {
          queues: ['dispatch-ios'],
          workers: {
            dispatch: { type: 'kubernetes', namespace: NS, deployment: DEPLOYMENT, min: 1, max: 20 },
          },
        }),
      ],
    });
  });
  afterEach(() => {
    nock.cleanAll();
    tmp.remove();
  });

  it('patches the deployments/scale subresource when no autoscaler targets the deployment: 3 → 5', async () => {
    nock(API, { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(SCALE_PATH)
      .times(3)
      .reply(200, scaleOf(3))
      .get(HPA_PATH)
      .times(2)
      .reply(200, hpaList(hpa('other', 'pushizo-worker-events', 1, 5)));
    const keda = noKeda()
      .get(KEDA_PATH)
      .reply(404, status(404, 'NotFound', 'the server could not find the requested resource'));
    let patched: unknown;
    const patch = nock(API, {
      reqheaders: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/merge-patch+json' },
    })
      .patch(SCALE_PATH, (body) => {
        patched = body;
        return true;
      })
      .reply(200, scaleOf(5, 3));

    const run = await as('U0ALICE', 'scale', 'pushizo/dispatch', '5');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const request = requestOf(run);
    expect(request.preview).toBe(
      'scale pushizo/dispatch (Kubernetes): pushizo/pushizo-worker-dispatch 3 → 5 replicas.',
    );
    expect(request.status).toBe('done');
    expect(patched).toEqual({ spec: { replicas: 5 } });
    expect(request.result).toMatchObject({
      type: 'kubernetes',
      replicas: 5,
      targets: [{ name: 'pushizo/pushizo-worker-dispatch', before: 3, after: 5, ok: true }],
    });
    expect(request.result).not.toHaveProperty('autoscaler');
    expect(shown(run)).toContain('pushizo/pushizo-worker-dispatch 3 → 5 replicas');
    expect(patch.isDone()).toBe(true);
    expect(keda.isDone()).toBe(true);
    const entry = (await auditEntries(config, env)).find((e) => e.action === 'action.scale')!;
    expect(entry.params).toMatchObject({
      planned: { targets: [{ before: 3 }] },
      result: { targets: [{ after: 5 }] },
    });
  });

  it('patches the HPA that targets the deployment (minReplicas, and maxReplicas when below), never the replica count', async () => {
    const target = hpa(DEPLOYMENT, DEPLOYMENT, 2, 4);
    nock(API)
      .get(SCALE_PATH)
      .times(3)
      .reply(200, scaleOf(3))
      .get(HPA_PATH)
      .times(2)
      .reply(200, hpaList(hpa('other', 'pushizo-worker-events', 1, 5), target));
    noKeda();
    noKeda();
    let body: unknown;
    const patch = nock(API, { reqheaders: { 'content-type': 'application/merge-patch+json' } })
      .patch(`${HPA_PATH}/${DEPLOYMENT}`, (b) => {
        body = b;
        return true;
      })
      .reply(200, hpa(DEPLOYMENT, DEPLOYMENT, 6, 6));

    const run = await as('U0ALICE', 'scale', 'pushizo/dispatch', '6');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const request = requestOf(run);
    expect(request.preview).toBe(
      'scale pushizo/dispatch (Kubernetes): pushizo/pushizo-worker-dispatch 3 → 6 replicas. ' +
        'HorizontalPodAutoscaler pushizo-worker-dispatch owns the replica count and would overwrite it at once, ' +
        'so its minimum goes 2 → 6 and its maximum 4 → 6 instead.',
    );
    expect(body).toEqual({ spec: { minReplicas: 6, maxReplicas: 6 } });
    expect(patch.isDone()).toBe(true);
    expect(request.result).toMatchObject({
      autoscaler: {
        kind: 'HorizontalPodAutoscaler',
        name: DEPLOYMENT,
        before: { min: 2, max: 4 },
        after: { min: 6, max: 6 },
      },
    });
    expect(shown(run)).toContain('HorizontalPodAutoscaler pushizo-worker-dispatch now keeps 6..6 replicas');
  });

  it('patches a KEDA ScaledObject’s minReplicaCount rather than the HPA KEDA made for it', async () => {
    const scaledObject = {
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      metadata: { name: 'dispatch-scaler', namespace: NS },
      spec: { scaleTargetRef: { name: DEPLOYMENT }, minReplicaCount: 1, maxReplicaCount: 20, triggers: [] },
    };
    nock(API)
      .get(SCALE_PATH)
      .times(3)
      .reply(200, scaleOf(2))
      .get(HPA_PATH)
      .times(2)
      .reply(200, hpaList(hpa('keda-hpa-dispatch-scaler', DEPLOYMENT, 1, 20)))
      .get(KEDA_PATH)
      .times(2)
      .reply(200, {
        apiVersion: 'keda.sh/v1alpha1',
        kind: 'ScaledObjectList',
        metadata: {},
        items: [scaledObject],
      });
    let body: unknown;
    const patch = nock(API, { reqheaders: { 'content-type': 'application/merge-patch+json' } })
      .patch(`${KEDA_PATH}/dispatch-scaler`, (b) => {
        body = b;
        return true;
      })
      .reply(200, { ...scaledObject, spec: { ...scaledObject.spec, minReplicaCount: 4 } });

    const run = await as('U0ALICE', 'scale', 'pushizo/dispatch', '4');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const request = requestOf(run);
    expect(request.preview).toContain('ScaledObject dispatch-scaler owns the replica count');
    expect(request.preview).toContain('its minimum goes 1 → 4 instead');
    expect(body).toEqual({ spec: { minReplicaCount: 4, maxReplicaCount: 20 } });
    expect(patch.isDone()).toBe(true);
    expect(request.result).toMatchObject({
      autoscaler: { kind: 'ScaledObject', after: { min: 4, max: 20 } },
    });
  });

  it('answers a 403 with the RBAC verb and resource the service account lacks', async () => {
    nock(API)
      .get(SCALE_PATH)
      .times(2)
      .reply(200, scaleOf(3))
      .get(HPA_PATH)
      .times(2)
      .reply(200, hpaList())
      .patch(SCALE_PATH)
      .reply(
        403,
        status(
          403,
          'Forbidden',
          `deployments.apps "${DEPLOYMENT}" is forbidden: User "system:serviceaccount:ops:queue-ops" cannot patch resource "deployments/scale" in API group "apps" in the namespace "${NS}"`,
        ),
      );
    noKeda();
    noKeda();
    const run = await as('U0ALICE', 'scale', 'pushizo/dispatch', '5');
    expect(run.code).toBe(1);
    expect(requestOf(run).status).toBe('failed');
    expect(shown(run)).toContain(
      "Kubernetes refused: the bot's service account may not `patch` `deployments/scale` in namespace `pushizo`.",
    );
  });

  it('answers a 404 with the deployment that was not found, before any request is stored', async () => {
    nock(API)
      .get(SCALE_PATH)
      .reply(404, status(404, 'NotFound', `deployments.apps "${DEPLOYMENT}" not found`))
      .get(HPA_PATH)
      .reply(200, hpaList());
    noKeda();
    const run = await as('U0ALICE', 'scale', 'pushizo/dispatch', '5');
    expect(run.code).toBe(1);
    expect(json(run).error?.message).toBe(
      'Kubernetes has no deployment `pushizo-worker-dispatch` in namespace `pushizo`.',
    );
    expect((await auditEntries(config, env)).some((e) => e.action === 'request.created')).toBe(false);
  });

  it('shows the group in workers with desired, ready and current replicas and the HPA that owns it', async () => {
    nock(API)
      .get(SCALE_PATH)
      .reply(200, scaleOf(4, 3))
      .get(DEPLOYMENT_PATH)
      .reply(200, deploymentOf(3, 2))
      .get(HPA_PATH)
      .reply(200, hpaList(hpa(DEPLOYMENT, DEPLOYMENT, 2, 10)));
    noKeda();
    const run = await as('U0DAVE', 'workers', 'pushizo');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const groups = (json(run).data as { systems: { groups: unknown[] }[] }).systems[0]!.groups;
    expect(groups).toEqual([
      {
        ok: true,
        system: 'pushizo',
        group: 'dispatch',
        type: 'kubernetes',
        min: 1,
        max: 20,
        targets: [{ name: 'pushizo/pushizo-worker-dispatch', desired: 4, current: 3, ready: 2 }],
        autoscaler: { kind: 'HorizontalPodAutoscaler', name: DEPLOYMENT, min: 2, max: 10 },
      },
    ]);
    expect(shown(run)).toContain(
      'desired 4, ready 2, current 3 · bounds 1..20 · owned by HorizontalPodAutoscaler',
    );
  });

  it('with the minimal Role (no get on deployments) workers still answers, ready shown as unknown and why', async () => {
    nock(API)
      .get(SCALE_PATH)
      .reply(200, scaleOf(4, 4))
      .get(DEPLOYMENT_PATH)
      .reply(
        403,
        status(
          403,
          'Forbidden',
          `deployments.apps "${DEPLOYMENT}" is forbidden: User "system:serviceaccount:queue-ops:queue-ops" cannot get resource "deployments" in API group "apps" in the namespace "${NS}"`,
        ),
      )
      .get(HPA_PATH)
      .reply(200, hpaList());
    noKeda();
    const run = await as('U0DAVE', 'workers', 'pushizo');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const groups = (json(run).data as { systems: { groups: { targets: unknown[] }[] }[] }).systems[0]!.groups;
    expect(groups[0]!.targets).toEqual([
      { name: 'pushizo/pushizo-worker-dispatch', desired: 4, current: 4, ready: null },
    ]);
    expect(shown(run)).toContain('desired 4, ready ? (needs get on deployments), current 4');
  });

  it('says where credentials come from when there is no KUBECONFIG and no cluster', async () => {
    env = { HOME: tmp.dir, PATH: process.env.PATH };
    const run = await as('U0ALICE', 'scale', 'pushizo/dispatch', '5');
    expect(run.code).toBe(1);
    expect(json(run).error?.message).toContain('no Kubernetes credentials: set KUBECONFIG');
  });
});
