/**
 * Scalers change how much capacity a worker group has (`scale <system>/<group> <n>`): a Kubernetes
 * deployment, a Compose service, or the pool of every Celery worker of a system. Commands see
 * only this interface; each kind lives in its own file.
 */

export type GroupType = 'kubernetes' | 'compose' | 'celery-pool';

/** One thing a group's size is made of: a deployment, a Compose service, one Celery worker's pool. */
export interface TargetState {
  /** `pushizo/pushizo-worker-dispatch` (namespace/deployment), `celery-worker`, `celery@host`. */
  name: string;
  /** Kubernetes: spec.replicas; Compose: running containers; Celery: pool processes. */
  desired: number | null;
  /** Kubernetes: status.replicas (pods the deployment has now); Compose, Celery: as `desired`. */
  current: number | null;
  /**
   * Kubernetes only: the deployment's status.readyReplicas, or null when it could not be read
   * (the Role lacks `get` on `deployments`): scaling never depends on it.
   */
  ready?: number | null;
  /** Celery `--autoscale` range of this worker. */
  autoscale?: Range;
}

export interface Range {
  min: number;
  max: number;
}

/** An autoscaler that owns the replica count, so a plain count would be overwritten at once. */
export interface AutoscalerState {
  kind: 'HorizontalPodAutoscaler' | 'ScaledObject';
  name: string;
  min: number;
  max: number;
}

/** What `workers` shows for a group, and what a preview is computed from. */
export interface GroupState {
  system: string;
  group: string;
  type: GroupType;
  /** Bounds from config. */
  min: number;
  max: number;
  targets: TargetState[];
  autoscaler?: AutoscalerState;
}

/** One target's change: planned (preview) or done (outcome). */
export interface TargetChange {
  name: string;
  before: number | null;
  after: number | null;
  /** Celery: the worker's answer; Compose: nothing; Kubernetes: nothing. */
  answer?: string;
  ok?: boolean;
  autoscale?: { before: Range; after: Range | null };
}

export interface AutoscalerChange {
  kind: AutoscalerState['kind'];
  name: string;
  before: Range;
  after: Range;
}

/** The preview (planned) or the outcome (done) of one scale; stored as the request's result. */
export interface ScaleReport {
  system: string;
  group: string;
  type: GroupType;
  replicas: number;
  targets: TargetChange[];
  /** Set when an autoscaler owns the count: it is patched instead of the replica count. */
  autoscaler?: AutoscalerChange;
}

export interface Scaler extends Restarter {
  readonly type: GroupType;
  /** Reads the group's live state. */
  state(): Promise<GroupState>;
  /** Changes the group to `replicas` and answers with what really happened. */
  scale(replicas: number): Promise<ScaleReport>;
}

/**
 * What scaling to `replicas` would do, from the live state: every target goes to `replicas`;
 * an autoscaler's minimum becomes `replicas` and its maximum rises to meet it if it is lower.
 */
export function planScale(state: GroupState, replicas: number): ScaleReport {
  const report: ScaleReport = {
    system: state.system,
    group: state.group,
    type: state.type,
    replicas,
    targets: state.targets.map((t) => {
      const change: TargetChange = { name: t.name, before: t.desired, after: replicas };
      if (t.autoscale)
        change.autoscale = {
          before: t.autoscale,
          after: { min: replicas, max: Math.max(t.autoscale.max, replicas) },
        };
      return change;
    }),
  };
  if (state.autoscaler) report.autoscaler = autoscalerChange(state.autoscaler, replicas);
  return report;
}

export function autoscalerChange(autoscaler: AutoscalerState, replicas: number): AutoscalerChange {
  return {
    kind: autoscaler.kind,
    name: autoscaler.name,
    before: { min: autoscaler.min, max: autoscaler.max },
    after: { min: replicas, max: Math.max(autoscaler.max, replicas) },
  };
}

/**
 * How one target is restarted: a Kubernetes rollout restart, `docker compose restart`, or a
 * Celery worker's `pool_restart` (its pool processes replaced) or `shutdown` (the worker exits,
 * for its supervisor to start again).
 */
export type RestartMethod = 'rollout' | 'compose-restart' | 'pool_restart' | 'shutdown';

/** One thing a restart acts on: planned (preview) or done (outcome). */
export interface RestartTarget {
  /** `namespace/deployment`, the Compose service, `celery@host`. */
  name: string;
  method: RestartMethod;
  /** `poolRestartsOff`: a Celery worker shut down because it was started without pool restarts. */
  reason?: 'poolRestartsOff';
  /** Replicas (Kubernetes) or running containers (Compose) when planned, and after. */
  before?: number | null;
  after?: number | null;
  /** Celery: the worker's own words; Kubernetes: how far the rollout got. */
  answer?: string;
  ok?: boolean;
  /** Celery: the worker answered that pool restarts are not enabled. */
  poolRestartsOff?: boolean;
}

/** What a restart will do (the preview, stored with the request) and then did. */
export interface RestartPlan {
  system: string;
  group: string;
  type: GroupType;
  targets: RestartTarget[];
  /**
   * Whose return is checked: worker name patterns (`*` any run of characters); `[]`: none (celery
   * beat answers no ping); absent: every worker of the system, or for a Celery pool its targets.
   */
  workerNames?: string[];
  timeoutSeconds: number;
}

/** A Kubernetes rollout as the deployment's status last showed it. */
export interface RolloutState {
  desired: number;
  updated: number;
  available: number;
  /** Pods of the deployment in all, old ones included. */
  total: number;
  complete: boolean;
}

/** Who answers again after a restart, within the group's timeout. */
export interface ComeBack {
  /** False when the group names no workers to check (`workerNames: []`). */
  checked: boolean;
  /** The group's workers that answered just before the restart. */
  before: string[];
  /** Answered before and again, as a new process (or, after pool_restart, with new pool processes). */
  back: string[];
  /** Names that did not answer before, started since the restart (new pods, new connections). */
  fresh: string[];
  /** Answered before and still do, but were not restarted (the same process). */
  notRestarted: string[];
  /** Answered before and no longer do. */
  missing: string[];
  /** Every worker that answered before is back or replaced by a fresh one. */
  complete: boolean;
  waitedSeconds: number;
}

/** The outcome of a restart, stored as the request's result and in the audit. */
export interface RestartReport extends RestartPlan {
  rollout?: RolloutState;
  comeBack: ComeBack;
}

/** What a group does for `restart`; the come-back check is the command's, the same for every kind. */
export interface Restarter {
  /** What a restart would do now, from the live state and the group's config. */
  planRestart(): Promise<RestartPlan>;
  /** Restarts what the plan names (its targets, not whatever appeared since), and says how it went. */
  restart(plan: RestartPlan): Promise<{ targets: RestartTarget[]; rollout?: RolloutState }>;
}
