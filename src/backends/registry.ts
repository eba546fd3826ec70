import type { QueueBackend } from './queue-backend.js';

/** Resolves names from config to live backends (what commands, the monitor and metrics read). */
export interface BackendRegistry {
  names(): string[];
  get(name: string): QueueBackend | undefined;
  all(): QueueBackend[];
}

/** The live backends, by system name in config order; closing it closes every one of them. */
export interface ClosableBackendRegistry extends BackendRegistry {
  close(): Promise<void>;
}

export function createBackendRegistry(backends: readonly QueueBackend[]): ClosableBackendRegistry {
  const byName = new Map<string, QueueBackend>();
  for (const backend of backends) {
    if (byName.has(backend.name)) throw new Error(`two backends are called "${backend.name}"`);
    byName.set(backend.name, backend);
  }
  return {
    names: () => [...byName.keys()],
    get: (name) => byName.get(name),
    all: () => [...byName.values()],
    async close() {
      // One backend failing to close must not keep the others' connections open.
      await Promise.allSettled([...byName.values()].map((b) => b.close()));
    },
  };
}
