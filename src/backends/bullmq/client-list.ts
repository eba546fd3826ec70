import type { WorkerInfo } from '../queue-backend.js';

/** One parsed `CLIENT LIST` line: `id=7 addr=127.0.0.1:5000 name=bull:ZW1haWxz:w:w1 age=3 idle=0 …`. */
export type ClientEntry = Record<string, string>;

export function parseClientList(list: string): ClientEntry[] {
  const entries: ClientEntry[] = [];
  for (const line of list.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const entry: ClientEntry = {};
    for (const pair of line.split(' ')) {
      const index = pair.indexOf('=');
      if (index > 0) entry[pair.slice(0, index)] = pair.slice(index + 1);
    }
    entries.push(entry);
  }
  return entries;
}

/**
 * The workers of the given queues, matched the way BullMQ's `Queue.getWorkers` does it: a Worker's
 * blocking connection is named `<prefix>:<base64(queue)>`, or `<prefix>:<base64(queue)>:w:<name>`
 * when the Worker has a name. QueueEvents (`…:qe`) and other clients do not match.
 */
export function workersFromClientList(list: string, prefix: string, queues: readonly string[]): WorkerInfo[] {
  const byClientName = new Map<string, string>();
  for (const queue of queues) byClientName.set(`${prefix}:${Buffer.from(queue).toString('base64')}`, queue);
  const workers: WorkerInfo[] = [];
  for (const client of parseClientList(list)) {
    const raw = client.name;
    if (!raw) continue;
    let queue = byClientName.get(raw);
    let workerName: string | undefined;
    if (queue === undefined) {
      const marker = raw.indexOf(':w:', prefix.length + 1);
      if (marker < 0) continue;
      queue = byClientName.get(raw.slice(0, marker));
      workerName = raw.slice(marker + 3);
      if (queue === undefined) continue;
    }
    const idle = Number(client.idle);
    const age = Number(client.age);
    const details: Record<string, string | number> = {};
    if (client.addr) details.addr = client.addr;
    if (Number.isFinite(age)) details.ageSeconds = age;
    workers.push({
      name: workerName || client.addr || raw,
      queues: [queue],
      ...(Number.isFinite(idle) ? { idleSeconds: idle } : {}),
      details,
    });
  }
  return workers.sort((a, b) => a.name.localeCompare(b.name) || a.queues![0]!.localeCompare(b.queues![0]!));
}
