import { randomUUID } from 'node:crypto';

/**
 * The raw JSON text of each member of a top-level JSON object, unparsed. A task's arguments are
 * re-sent as the very text Celery stored: through `JSON.parse` a Python `1.0` would come back as
 * the int `1`, and an integer beyond 2^53 would lose digits. Undefined when `text` is not an
 * object.
 */
export function rawJsonMembers(text: string): Map<string, string> | undefined {
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n && /\s/.test(text[i]!)) i++;
  };
  const skipString = () => {
    // at the opening quote
    i++;
    while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= n) throw new Error('unterminated string');
    i++;
  };
  const skipValue = () => {
    ws();
    const ch = text[i];
    if (ch === '"') return skipString();
    if (ch === '{' || ch === '[') {
      let depth = 0;
      while (i < n) {
        const c = text[i]!;
        if (c === '"') {
          skipString();
          continue;
        }
        if (c === '{' || c === '[') depth++;
        else if (c === '}' || c === ']') {
          depth--;
          if (depth === 0) {
            i++;
            return;
          }
        }
        i++;
      }
      throw new Error('unterminated value');
    }
    while (i < n && !/[\s,}\]]/.test(text[i]!)) i++;
  };
  try {
    ws();
    if (text[i] !== '{') return undefined;
    i++;
    const members = new Map<string, string>();
    for (;;) {
      ws();
      if (text[i] === '}') return members;
      if (text[i] !== '"') return undefined;
      const keyStart = i;
      skipString();
      const key = JSON.parse(text.slice(keyStart, i)) as string;
      ws();
      if (text[i] !== ':') return undefined;
      i++;
      ws();
      const valueStart = i;
      skipValue();
      members.set(key, text.slice(valueStart, i));
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === '}') return members;
      else return undefined;
    }
  } catch {
    return undefined;
  }
}

/** A failed task as the result backend stored it, enough to send it again. */
export interface StoredTask {
  name: string;
  /** JSON text of the positional arguments (an array), as stored. */
  rawArgs: string;
  /** JSON text of the keyword arguments (an object), as stored. */
  rawKwargs: string;
  queue: string;
  /** The original message's priority when the backend stored one; else undefined (default list). */
  priority?: number;
  parentId?: string | null;
  rootId?: string | null;
}

/**
 * Reads name, args, kwargs and queue from a stored result (`celery-task-meta-<id>`, written with
 * `result_extended=True` and the json serializer). Undefined when any of them is missing: the
 * caller says the app needs `result_extended`.
 */
export function storedTask(raw: string): StoredTask | undefined {
  const members = rawJsonMembers(raw);
  if (!members) return undefined;
  const parse = (key: string): unknown => {
    const text = members.get(key);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  const name = parse('name');
  const queue = parse('queue');
  const args = parse('args');
  const kwargs = parse('kwargs');
  if (typeof name !== 'string' || !name || typeof queue !== 'string' || !queue) return undefined;
  if (!Array.isArray(args)) return undefined;
  if (kwargs !== null && (typeof kwargs !== 'object' || Array.isArray(kwargs))) return undefined;
  const priority = parse('priority');
  const parentId = parse('parent_id');
  const rootId = parse('root_id');
  return {
    name,
    rawArgs: members.get('args')!,
    // Celery stores `kwargs: null` for a task sent without any.
    rawKwargs: kwargs === null ? '{}' : members.get('kwargs')!,
    queue,
    ...(typeof priority === 'number' ? { priority } : {}),
    ...(typeof parentId === 'string' ? { parentId } : {}),
    ...(typeof rootId === 'string' ? { rootId } : {}),
  };
}

/**
 * A new task message for `task`, exactly as Celery 5 publishes one (protocol 2, json; the envelope
 * of queue-wire-formats.md A2): new task id, retries 0, no ETA or expiry (those are not stored),
 * body = base64 of `[args, kwargs, embed]` with args and kwargs as the stored text.
 */
export function taskEnvelope(
  task: StoredTask,
  options: { id?: string; origin: string; priority: number },
): { id: string; message: string } {
  const id = options.id ?? randomUUID();
  const body = Buffer.from(
    `[${task.rawArgs}, ${task.rawKwargs}, {"callbacks": null, "errbacks": null, "chain": null, "chord": null}]`,
    'utf8',
  ).toString('base64');
  const message = JSON.stringify({
    body,
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    headers: {
      lang: 'py',
      task: task.name,
      id,
      shadow: null,
      eta: null,
      expires: null,
      group: null,
      group_index: null,
      retries: 0,
      timelimit: [null, null],
      root_id: task.rootId ?? id,
      parent_id: task.parentId ?? null,
      // Celery logs these instead of the arguments; the arguments stay in the body only.
      argsrepr: '(…)',
      kwargsrepr: '{…}',
      origin: options.origin,
      ignore_result: false,
    },
    properties: {
      correlation_id: id,
      reply_to: randomUUID(),
      delivery_mode: 2,
      delivery_info: { exchange: '', routing_key: task.queue },
      priority: options.priority,
      body_encoding: 'base64',
      delivery_tag: randomUUID(),
    },
  });
  return { id, message };
}
