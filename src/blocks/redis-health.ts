import type { RedisHealth } from '../backends/redis-health.js';
import { type Locale, messages } from '../i18n/index.js';
import { formatBytes, formatDecimal, formatDuration, formatNumber, formatUtc } from './format.js';
import { context, header, inCode, inline, section } from './kit.js';
import type { KnownBlock, Message } from './message.js';

/** A fragmentation ratio above this, on more than a few MB, is memory Redis holds for nothing. */
const FRAGMENTATION_HIGH = 1.5;
const FRAGMENTATION_MIN_BYTES = 64 * 1024 * 1024;
/** Clients at this share of maxclients get a flag. */
const CLIENTS_NEAR = 0.8;

export interface RedisHealthView {
  system: string;
  health: RedisHealth;
  generatedAt: Date;
}

/** Whether Redis failed to write its data to disk: the runbook's "data corruption" alert. */
export function persistenceFailing(health: RedisHealth): boolean {
  return health.persistence.rdbLastStatus === 'err' || health.persistence.aofLastStatus === 'err';
}

/** Clients in use as a share of maxclients, or null when the limit is unknown. */
export function clientsRatio(health: RedisHealth): number | null {
  const { connected, max } = health.clients;
  return max ? connected / max : null;
}

/** `/queue redis <system>`: one message, each part a section; nothing from a value is shown. */
export function redisHealthMessage(view: RedisHealthView, locale: Locale): Message {
  const t = messages(locale).redis;
  const { health } = view;
  const bytes = (n: number) => formatBytes(n, locale);
  const optionalBytes = (n: number | null) => (n === null ? null : bytes(n));
  const { memory, clients, persistence } = health;

  const memoryLines = [
    t.memory(
      bytes(memory.used),
      bytes(memory.peak),
      memory.maxmemory > 0 ? bytes(memory.maxmemory) : null,
      memory.maxmemory > 0 ? Math.round((memory.used / memory.maxmemory) * 100) : null,
      inCode(memory.policy, 40),
    ),
    t.memoryDetail(
      optionalBytes(memory.dataset),
      optionalBytes(memory.overhead),
      optionalBytes(memory.rss),
      memory.fragmentationRatio === null ? null : formatDecimal(memory.fragmentationRatio, 2, locale),
    ),
  ];
  if (
    memory.fragmentationRatio !== null &&
    memory.fragmentationRatio > FRAGMENTATION_HIGH &&
    (memory.rss ?? 0) > FRAGMENTATION_MIN_BYTES
  )
    memoryLines.push(t.fragmentationHigh(formatDecimal(memory.fragmentationRatio, 2, locale)));

  const clientLines = [t.clients(clients.connected, clients.blocked, clients.max)];
  const ratio = clientsRatio(health);
  if (ratio !== null && ratio >= CLIENTS_NEAR) clientLines.push(t.clientsNearLimit(Math.round(ratio * 100)));

  const slowlogLines =
    health.slowlog === null
      ? [t.slowlogDenied(inline(health.slowlogError ?? '?', 200))]
      : health.slowlog.length === 0
        ? [t.slowlogEmpty]
        : health.slowlog.map((entry) =>
            t.slowlogLine(
              formatUtc(entry.at, locale),
              entry.durationMicros >= 1000
                ? `${formatDecimal(entry.durationMicros / 1000, 1, locale)} ms`
                : `${formatNumber(entry.durationMicros, locale)} µs`,
              inCode(entry.command, 40),
              entry.key === null ? null : `\`${inCode(entry.key, 120)}\``,
            ),
          );

  const keyspaceLines =
    health.keyspace.length === 0
      ? [t.keyspaceEmpty]
      : health.keyspace.map((row) =>
          t.keyspaceLine(
            row.db,
            formatNumber(row.keys, locale),
            row.keys === 0 ? 0 : Math.round(((row.keys - row.expires) / row.keys) * 100),
          ),
        );

  const { sample } = health;
  const bigKeyLines =
    health.bigKeys.length === 0
      ? [t.bigKeysNone]
      : health.bigKeys.map((key) =>
          t.bigKeyLine(
            `\`${inCode(key.key, 120)}\``,
            key.type,
            bytes(key.bytes),
            key.length === null ? null : formatNumber(key.length, locale),
          ),
        );

  const persistenceLines = [
    t.persistence(
      persistence.rdbLastStatus,
      persistence.aofLastStatus,
      persistence.lastSaveAt === null ? null : formatUtc(persistence.lastSaveAt, locale),
      persistence.changesSinceLastSave === null
        ? null
        : formatNumber(persistence.changesSinceLastSave, locale),
    ),
  ];
  if (persistenceFailing(health)) persistenceLines.unshift(t.persistenceFailing);
  if (persistence.loading) persistenceLines.unshift(t.loading);
  if (!persistence.aofEnabled) persistenceLines.push(t.snapshotOnly);

  const blocks: KnownBlock[] = [
    header(t.title(view.system)),
    context(
      t.server(
        health.version === undefined ? undefined : inline(health.version, 20),
        health.role === undefined ? undefined : inline(health.role, 20),
        health.uptimeSeconds === undefined ? null : formatDuration(health.uptimeSeconds, locale),
      ),
      messages(locale).workers.updated(formatUtc(view.generatedAt, locale)),
    ),
    section([t.memoryTitle, ...memoryLines].join('\n')),
    section([t.clientsTitle, ...clientLines].join('\n')),
    section([t.persistenceTitle, ...persistenceLines].join('\n')),
    section([t.keyspaceTitle, ...keyspaceLines].join('\n')),
    section(
      [
        t.bigKeysTitle(
          formatNumber(sample.scanned, locale),
          formatNumber(sample.total, locale),
          sample.complete,
          t.budget[sample.stoppedBy] ?? sample.stoppedBy,
          health.queueKeys.length,
          formatNumber(
            health.queueKeys.reduce((sum, q) => sum + q.keys, 0),
            locale,
          ),
        ),
        ...bigKeyLines,
        ...(health.bigKeys.length > 0 && memory.used > 0
          ? [
              t.explained(
                health.bigKeys.length,
                bytes(health.explainedBytes),
                Math.min(100, Math.round((health.explainedBytes / memory.used) * 100)),
                bytes(memory.used),
              ),
            ]
          : []),
      ].join('\n'),
    ),
    section([t.slowlogTitle, ...slowlogLines].join('\n')),
  ];
  return { text: t.fallback(inline(view.system, 80), bytes(memory.used), clients.connected), blocks };
}
