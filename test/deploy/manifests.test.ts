import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

/**
 * `kubectl apply --dry-run=client` cannot run here, so the manifests are checked the way it would
 * fail them: every document parses, has the fields its kind needs, and every reference between
 * objects (service account, config map, secret, selectors, role binding, probe ports) resolves.
 */
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML
  [field: string]: any;
}

const dir = join(import.meta.dirname, '../../deploy/kubernetes');

function loadManifests(): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      expect(doc.errors, file).toEqual([]);
      const value = doc.toJS() as K8sObject | null;
      if (value) objects.push(value);
    }
  }
  return objects;
}

const objects = loadManifests();
const find = (kind: string, name?: string) =>
  objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
const one = (kind: string, name?: string) => {
  const found = find(kind, name);
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0]!;
};
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** The rules of every Role docs/deploy.md shows, from its ```yaml blocks holding `kind: Role`. */
function readmeRoleRules(): unknown[] {
  const readme = readFileSync(join(import.meta.dirname, '../../docs/deploy.md'), 'utf8');
  const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const roles = blocks
    .filter((b) => /^kind: Role$/m.test(b))
    .flatMap((block) => parseAllDocuments(block).map((d) => d.toJS() as K8sObject))
    .filter((o) => o?.kind === 'Role');
  expect(roles.length, 'docs/deploy.md shows the Role in ```yaml blocks').toBeGreaterThan(0);
  return roles.map((role) => role.rules);
}

describe('deploy/kubernetes', () => {
  it('has every kind the deployment needs, each with apiVersion, kind and a name', () => {
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of [
      'Namespace',
      'Deployment',
      'Service',
      'ServiceAccount',
      'Role',
      'RoleBinding',
      'Secret',
      'ConfigMap',
      'PodDisruptionBudget',
      'PersistentVolumeClaim',
    ]) {
      expect(kinds.has(kind), kind).toBe(true);
    }
    for (const object of objects) {
      expect(object.apiVersion, object.kind).toMatch(/^[a-z0-9.]*\/?v\d/);
      expect(object.metadata?.name, object.kind).toMatch(/^[a-z0-9-]+$/);
    }
  });

  it('runs two replicas, ready on /readyz and alive on /healthz, as a non-root user', () => {
    const deployment = one('Deployment', 'queue-ops');
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    const portNames = container.ports.map((p: { name: string }) => p.name);
    expect(portNames).toContain(container.readinessProbe.httpGet.port);
    expect(portNames).toContain(container.livenessProbe.httpGet.port);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
  });

  it('references only objects that exist: service account, config map, secret, volumes', () => {
    const deployment = one('Deployment', 'queue-ops');
    const pod = deployment.spec.template.spec;
    const namespace = deployment.metadata.namespace;
    expect(find('Namespace', namespace)).toHaveLength(1);
    expect(find('ServiceAccount', pod.serviceAccountName)[0]?.metadata.namespace).toBe(namespace);
    for (const volume of pod.volumes.filter((v: { configMap?: unknown }) => v.configMap)) {
      expect(find('ConfigMap', volume.configMap.name), volume.name).toHaveLength(1);
    }
    const container = pod.containers[0];
    for (const source of container.envFrom) {
      if (source.secretRef) expect(find('Secret', source.secretRef.name)).toHaveLength(1);
    }
    const mounts = container.volumeMounts.map((m: { name: string }) => m.name);
    const volumes = pod.volumes.map((v: { name: string }) => v.name);
    for (const mount of mounts) expect(volumes).toContain(mount);
    // The config file the container is told to read is the one the ConfigMap mounts.
    const configPath = container.env.find((e: { name: string }) => e.name === 'QUEUE_OPS_CONFIG').value;
    const configMount = container.volumeMounts.find((m: { name: string }) => m.name === 'config');
    const configMap = one('ConfigMap', 'queue-ops-config');
    expect(Object.keys(configMap.data).map((key) => `${configMount.mountPath}/${key}`)).toContain(configPath);
  });

  it('keeps purge archives on one volume every replica mounts, where the config writes them', () => {
    const pod = one('Deployment', 'queue-ops').spec.template.spec;
    const mount = pod.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'data');
    const volume = pod.volumes.find((v: { name: string }) => v.name === 'data');
    const claim = one('PersistentVolumeClaim', volume.persistentVolumeClaim.claimName);
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
    const config = parse(one('ConfigMap', 'queue-ops-config').data['queue-ops.yml']) as {
      archive: { dir: string };
    };
    expect(config.archive.dir.startsWith(`${mount.mountPath}/`)).toBe(true);
  });

  it('selects the deployment’s pods from the Service and the PodDisruptionBudget', () => {
    const labels = one('Deployment', 'queue-ops').spec.template.metadata.labels;
    expect(matches(one('Deployment', 'queue-ops').spec.selector.matchLabels, labels)).toBe(true);
    expect(matches(one('Service').spec.selector, labels)).toBe(true);
    expect(matches(one('PodDisruptionBudget').spec.selector.matchLabels, labels)).toBe(true);
    const service = one('Service');
    const portNames = one('Deployment', 'queue-ops').spec.template.spec.containers[0].ports.map(
      (p: { name: string }) => p.name,
    );
    expect(portNames).toContain(service.spec.ports[0].targetPort);
  });

  it('binds the Role to the bot’s service account in the same namespace as the Role', () => {
    const binding = one('RoleBinding');
    const role = one('Role', binding.roleRef.name);
    expect(binding.roleRef.kind).toBe('Role');
    expect(binding.metadata.namespace).toBe(role.metadata.namespace);
    const subject = binding.subjects[0];
    const account = one('ServiceAccount', subject.name);
    expect(subject.kind).toBe('ServiceAccount');
    expect(subject.namespace).toBe(account.metadata.namespace);
  });

  it('grants exactly the verbs scale needs, and exactly the rules README states', () => {
    const role = one('Role');
    const rules = role.rules.map((r: { apiGroups: string[]; resources: string[]; verbs: string[] }) => ({
      apiGroups: r.apiGroups,
      resources: r.resources,
      verbs: [...r.verbs].sort(),
    }));
    expect(rules).toEqual([
      { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get', 'patch'] },
      // The scaler lists HPAs and ScaledObjects (to find the one targeting the deployment) and
      // patches them; it never reads one by name.
      { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: ['list', 'patch'] },
      { apiGroups: ['keda.sh'], resources: ['scaledobjects'], verbs: ['list', 'patch'] },
    ]);
    for (const rules of readmeRoleRules()) expect(rules).toEqual(role.rules);
  });

  it('keeps example secrets placeholders, never real-looking tokens', () => {
    const secret = one('Secret');
    for (const [key, value] of Object.entries<string>(secret.stringData)) {
      expect(value, key).toMatch(/replace-me/);
    }
  });
});
