import type { BackendRegistry } from '../backends/registry.js';
import type { Config, WorkerGroupConfig } from '../config/schema.js';
import { createCeleryPoolScaler } from './celery-pool.js';
import { type ComposeRunnerDeps, createComposeScaler } from './compose.js';
import { createKubernetesScaler, type KubeApis } from './kubernetes.js';
import type { Scaler } from './types.js';

export type * from './types.js';
export { planScale } from './types.js';

/** The configured worker groups and their scalers. */
export interface ScalerRegistry {
  /** Group names of a system, in config order. */
  groups(system: string): string[];
  /** The group's config (its type and bounds). */
  spec(system: string, group: string): WorkerGroupConfig | undefined;
  get(system: string, group: string): Scaler | undefined;
}

export interface ScalerRegistryDeps {
  config: Pick<Config, 'systems'>;
  backends: BackendRegistry;
  /** Kubernetes clients, built on first use (from KUBECONFIG or the in-cluster service account). */
  kubernetes: () => Promise<KubeApis | undefined>;
  compose: ComposeRunnerDeps;
}

export function createScalerRegistry(deps: ScalerRegistryDeps): ScalerRegistry {
  const scalers = new Map<string, Scaler>();
  const specs = new Map<string, WorkerGroupConfig>();
  const key = (system: string, group: string) => `${system}\u0000${group}`;
  let kube: Promise<KubeApis | undefined> | undefined;
  const kubernetes = () => {
    // One set of clients per process; a failed load (a bad kubeconfig) is tried again next time.
    kube ??= deps.kubernetes().catch((error: unknown) => {
      kube = undefined;
      throw error;
    });
    return kube;
  };
  for (const system of deps.config.systems) {
    for (const [group, spec] of Object.entries(system.workers ?? {})) {
      specs.set(key(system.name, group), spec);
      const common = { system: system.name, group };
      let scaler: Scaler | undefined;
      switch (spec.type) {
        case 'kubernetes':
          scaler = createKubernetesScaler({ ...common, spec, apis: kubernetes });
          break;
        case 'compose':
          scaler = createComposeScaler({ ...common, spec, ...deps.compose });
          break;
        case 'celery-pool': {
          const backend = deps.backends.get(system.name);
          if (backend) scaler = createCeleryPoolScaler({ ...common, spec, backend });
          break;
        }
      }
      if (scaler) scalers.set(key(system.name, group), scaler);
    }
  }
  return {
    groups: (system) => Object.keys(deps.config.systems.find((s) => s.name === system)?.workers ?? {}),
    spec: (system, group) => specs.get(key(system, group)),
    get: (system, group) => scalers.get(key(system, group)),
  };
}
