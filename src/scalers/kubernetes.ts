import type { AppsV1Api, AutoscalingV2Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubernetesGroupConfig } from '../config/schema.js';
import { ErrorCode, OpsError } from '../errors.js';
import { messages } from '../i18n/index.js';
import { loadKubernetesClient } from '../lib/lazy.js';
import {
  type AutoscalerChange,
  type AutoscalerState,
  autoscalerChange,
  type GroupState,
  type RestartPlan,
  type RestartTarget,
  type RolloutState,
  type ScaleReport,
  type Scaler,
} from './types.js';

type ClientNode = typeof import('@kubernetes/client-node');

let clientNode: Promise<ClientNode> | undefined;
/**
 * The client library, loaded on first use: it is large, and every command line run (most of
 * which never touch Kubernetes) would otherwise pay for loading it.
 */
function loadClientNode(): Promise<ClientNode> {
  clientNode ??= loadKubernetesClient();
  return clientNode;
}

/** The three APIs a Kubernetes group needs, built from one KubeConfig, plus the library's helpers. */
export interface KubeApis {
  apps: AppsV1Api;
  autoscaling: AutoscalingV2Api;
  custom: CustomObjectsApi;
  lib: Pick<ClientNode, 'ApiException' | 'PatchStrategy' | 'setHeaderOptions'>;
}

/**
 * Clients with credentials as `kubectl` finds them, from the environment the composition root
 * hands in: the first file of `KUBECONFIG`, else the pod's service account when running in a
 * cluster. Undefined when there is neither; the group then answers `ScaleFailed` naming both.
 */
export async function loadKubeApis(env: Record<string, string | undefined>): Promise<KubeApis | undefined> {
  const file = env.KUBECONFIG?.split(':').find((p) => p !== '');
  if (!file && !env.KUBERNETES_SERVICE_HOST) return undefined;
  const lib = await loadClientNode();
  const kc = new lib.KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromCluster();
  return {
    apps: kc.makeApiClient(lib.AppsV1Api),
    autoscaling: kc.makeApiClient(lib.AutoscalingV2Api),
    custom: kc.makeApiClient(lib.CustomObjectsApi),
    lib,
  };
}

const KEDA = { group: 'keda.sh', version: 'v1alpha1', plural: 'scaledobjects' } as const;
const mergePatch = (lib: KubeApis['lib']) =>
  lib.setHeaderOptions('Content-Type', lib.PatchStrategy.MergePatch);

interface HpaLike {
  metadata?: { name?: string };
  spec?: { scaleTargetRef?: { kind?: string; name?: string }; minReplicas?: number; maxReplicas?: number };
}

interface ScaledObjectLike {
  metadata?: { name?: string };
  spec?: {
    scaleTargetRef?: { kind?: string; name?: string };
    minReplicaCount?: number;
    maxReplicaCount?: number;
  };
}

/** KEDA's defaults when a ScaledObject leaves the counts out. */
const KEDA_DEFAULT_MIN = 0;
const KEDA_DEFAULT_MAX = 100;

export interface KubernetesScalerDeps {
  system: string;
  group: string;
  spec: KubernetesGroupConfig;
  /** Built on first use, so a missing kubeconfig only affects Kubernetes groups. */
  apis: () => Promise<KubeApis | undefined>;
  /** The restart's timestamp (`kubectl.kubernetes.io/restartedAt`); the real clock by default. */
  now?: () => Date;
  /** How often a rollout's progress is read; default 1 s. */
  rolloutPollMs?: number;
}

/** The annotation `kubectl rollout restart` sets: a new value makes a new ReplicaSet. */
export const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

interface DeploymentLike {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
  };
}

/**
 * A rollout as `kubectl rollout status` judges it: the controller has seen the new template, every
 * replica is updated and available, and no old pod is left.
 */
export function rolloutOf(deployment: DeploymentLike): RolloutState {
  const desired = deployment.spec?.replicas ?? 1;
  const status = deployment.status ?? {};
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  const observed = (status.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0);
  return {
    desired,
    updated,
    available,
    total,
    complete: observed && updated >= desired && total <= updated && available >= updated,
  };
}

/** The Kubernetes API calls of one group's deployment, their failures as coded answers. */
function createKubeCalls(deps: KubernetesScalerDeps) {
  const { spec, system, group } = deps;
  const { namespace, deployment } = spec;

  async function apis(): Promise<KubeApis> {
    const built = await deps.apis();
    if (!built)
      throw new OpsError(ErrorCode.ScaleFailed, {
        target: `${system}/${group}`,
        reason: messages().scale.failures.noKubeCredentials,
      });
    return built;
  }

  /** Runs one API call; 403 and 404 become answers that name what is missing. */
  async function call<T>(
    verb: string,
    resource: string,
    kind: string,
    name: string,
    send: (api: KubeApis) => Promise<T>,
  ): Promise<T> {
    const api = await apis();
    try {
      return await send(api);
    } catch (error) {
      if (error instanceof api.lib.ApiException) {
        if (error.code === 403)
          throw new OpsError(ErrorCode.KubernetesForbidden, { verb, resource, namespace });
        if (error.code === 404) throw new OpsError(ErrorCode.KubernetesNotFound, { kind, name, namespace });
        const body = error.body as { message?: unknown } | string | undefined;
        const message =
          typeof body === 'object' && body?.message ? String(body.message) : `HTTP ${error.code}`;
        throw new OpsError(ErrorCode.ScaleFailed, { target: `${system}/${group}`, reason: message });
      }
      throw new OpsError(ErrorCode.ScaleFailed, {
        target: `${system}/${group}`,
        reason: (error as Error)?.message ?? String(error),
      });
    }
  }

  async function readScale() {
    const scale = await call('get', 'deployments/scale', 'deployment', deployment, (api) =>
      api.apps.readNamespacedDeploymentScale({ name: deployment, namespace }),
    );
    return { desired: scale.spec?.replicas ?? 0, current: scale.status?.replicas ?? 0 };
  }

  /**
   * Ready pods, from the deployment itself (the scale subresource has no readiness). Best effort:
   * a Role without `get` on `deployments`, or any other failure, shows as unknown, never as an
   * error of the group.
   */
  async function readReady(): Promise<number | null> {
    try {
      const api = await apis();
      const live = await api.apps.readNamespacedDeployment({ name: deployment, namespace });
      return live.status?.readyReplicas ?? 0;
    } catch {
      return null;
    }
  }

  const readDeployment = () =>
    call('get', 'deployments', 'deployment', deployment, (api) =>
      api.apps.readNamespacedDeployment({ name: deployment, namespace }),
    ) as Promise<DeploymentLike>;

  return { apis, call, readScale, readReady, readDeployment };
}

type KubeCalls = ReturnType<typeof createKubeCalls>;

/** The KEDA ScaledObject that scales the deployment, if any (none when KEDA is not installed). */
async function findScaledObject(
  { call }: KubeCalls,
  namespace: string,
  deployment: string,
): Promise<AutoscalerState | undefined> {
  let list: { items?: ScaledObjectLike[] };
  try {
    list = (await call('list', 'scaledobjects.keda.sh', 'ScaledObject list', namespace, (api) =>
      api.custom.listNamespacedCustomObject({ ...KEDA, namespace }),
    )) as { items?: ScaledObjectLike[] };
  } catch (error) {
    // No KEDA in this cluster: its API is simply not there.
    if (error instanceof OpsError && error.code === ErrorCode.KubernetesNotFound) return undefined;
    throw error;
  }
  const owner = (list.items ?? []).find(
    (so) =>
      so.spec?.scaleTargetRef?.name === deployment &&
      (so.spec.scaleTargetRef.kind ?? 'Deployment') === 'Deployment',
  );
  if (!owner?.metadata?.name) return undefined;
  return {
    kind: 'ScaledObject',
    name: owner.metadata.name,
    min: owner.spec?.minReplicaCount ?? KEDA_DEFAULT_MIN,
    max: owner.spec?.maxReplicaCount ?? KEDA_DEFAULT_MAX,
  };
}

/** The HorizontalPodAutoscaler that scales the deployment, if any. */
async function findHpa(
  { call }: KubeCalls,
  namespace: string,
  deployment: string,
): Promise<AutoscalerState | undefined> {
  const list = await call(
    'list',
    'horizontalpodautoscalers',
    'HorizontalPodAutoscaler list',
    namespace,
    (api) => api.autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace }),
  );
  const owner = (list.items as HpaLike[]).find(
    (hpa) => hpa.spec?.scaleTargetRef?.kind === 'Deployment' && hpa.spec.scaleTargetRef.name === deployment,
  );
  if (!owner?.metadata?.name) return undefined;
  return {
    kind: 'HorizontalPodAutoscaler',
    name: owner.metadata.name,
    min: owner.spec?.minReplicas ?? 1,
    max: owner.spec?.maxReplicas ?? 1,
  };
}

/** Sets the autoscaler's minimum (and maximum) as `change` says; `change.after` becomes what it answered. */
async function patchAutoscaler(
  { call }: KubeCalls,
  namespace: string,
  owner: AutoscalerState,
  change: AutoscalerChange,
): Promise<void> {
  if (owner.kind === 'ScaledObject') {
    const patched = (await call('patch', 'scaledobjects.keda.sh', 'ScaledObject', owner.name, (api) =>
      api.custom.patchNamespacedCustomObject(
        {
          ...KEDA,
          namespace,
          name: owner.name,
          body: { spec: { minReplicaCount: change.after.min, maxReplicaCount: change.after.max } },
        },
        mergePatch(api.lib),
      ),
    )) as ScaledObjectLike;
    change.after = {
      min: patched.spec?.minReplicaCount ?? change.after.min,
      max: patched.spec?.maxReplicaCount ?? change.after.max,
    };
  } else {
    const patched = await call(
      'patch',
      'horizontalpodautoscalers',
      'HorizontalPodAutoscaler',
      owner.name,
      (api) =>
        api.autoscaling.patchNamespacedHorizontalPodAutoscaler(
          {
            namespace,
            name: owner.name,
            body: { spec: { minReplicas: change.after.min, maxReplicas: change.after.max } },
          },
          mergePatch(api.lib),
        ),
    );
    change.after = {
      min: patched.spec?.minReplicas ?? change.after.min,
      max: patched.spec?.maxReplicas ?? change.after.max,
    };
  }
}

/**
 * A deployment scaled through its `scale` subresource, or — when a HorizontalPodAutoscaler or a
 * KEDA ScaledObject targets it — through that autoscaler's minimum (a replica count would be
 * overwritten by the autoscaler at once). KEDA drives its own HPA (`keda-hpa-<name>`), so a
 * ScaledObject wins over the HPA it made.
 */
export function createKubernetesScaler(deps: KubernetesScalerDeps): Scaler {
  const { spec, system, group } = deps;
  const { namespace, deployment } = spec;
  const target = `${namespace}/${deployment}`;

  const kube = createKubeCalls(deps);
  const { call, readScale, readReady, readDeployment } = kube;

  async function state(): Promise<GroupState> {
    const [scale, ready, scaledObject, hpa] = await Promise.all([
      readScale(),
      readReady(),
      findScaledObject(kube, namespace, deployment),
      findHpa(kube, namespace, deployment),
    ]);
    const out: GroupState = {
      system,
      group,
      type: 'kubernetes',
      min: spec.min,
      max: spec.max,
      targets: [{ name: target, desired: scale.desired, current: scale.current, ready }],
    };
    const autoscaler = scaledObject ?? hpa;
    if (autoscaler) out.autoscaler = autoscaler;
    return out;
  }

  async function scale(replicas: number): Promise<ScaleReport> {
    const before = await state();
    const report: ScaleReport = { system, group, type: 'kubernetes', replicas, targets: [] };
    const owner = before.autoscaler;
    if (owner) {
      const change = autoscalerChange(owner, replicas);
      await patchAutoscaler(kube, namespace, owner, change);
      report.autoscaler = change;
      // The autoscaler moves the replicas on its next sync; report the count as it is now.
      const now = await readScale();
      report.targets.push({ name: target, before: before.targets[0]!.desired, after: now.desired, ok: true });
      return report;
    }
    const patched = await call('patch', 'deployments/scale', 'deployment', deployment, (api) =>
      api.apps.patchNamespacedDeploymentScale(
        { name: deployment, namespace, body: { spec: { replicas } } },
        mergePatch(api.lib),
      ),
    );
    report.targets.push({
      name: target,
      before: before.targets[0]!.desired,
      after: patched.spec?.replicas ?? null,
      ok: patched.spec?.replicas === replicas,
    });
    return report;
  }

  async function planRestart(): Promise<RestartPlan> {
    const scale = await readScale();
    return {
      system,
      group,
      type: 'kubernetes',
      targets: [{ name: target, method: 'rollout', before: scale.desired }],
      ...(spec.workerNames ? { workerNames: spec.workerNames } : {}),
      timeoutSeconds: spec.restartTimeoutSeconds,
    };
  }

  /**
   * `kubectl rollout restart`: the pod template gets a new `restartedAt` annotation, so the
   * deployment rolls its pods as its strategy says; then the rollout is followed until it is
   * complete or the group's timeout passes (the answer says how far it got).
   */
  async function restart(plan: RestartPlan): Promise<{ targets: RestartTarget[]; rollout: RolloutState }> {
    const at = (deps.now ?? (() => new Date()))();
    const patched = (await call('patch', 'deployments', 'deployment', deployment, (api) =>
      api.apps.patchNamespacedDeployment(
        {
          name: deployment,
          namespace,
          body: {
            spec: {
              template: {
                metadata: { annotations: { [RESTARTED_AT]: at.toISOString().replace(/\.\d{3}Z$/, 'Z') } },
              },
            },
          },
        },
        mergePatch(api.lib),
      ),
    )) as DeploymentLike;
    const generation = patched.metadata?.generation ?? 0;
    const deadline = Date.now() + plan.timeoutSeconds * 1000;
    let rollout = rolloutOf(patched);
    for (;;) {
      const live = await readDeployment();
      // An answer from before the patch was seen says nothing about this rollout.
      rollout = rolloutOf({
        ...live,
        metadata: { generation: Math.max(generation, live.metadata?.generation ?? 0) },
      });
      if (rollout.complete || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, deps.rolloutPollMs ?? 1000));
    }
    return {
      targets: [
        {
          name: target,
          method: 'rollout',
          before: plan.targets[0]?.before ?? null,
          after: rollout.available,
          ok: rollout.complete,
        },
      ],
      rollout,
    };
  }

  return { type: 'kubernetes', state, scale, planRestart, restart };
}
