/**
 * Reading a watched Redis' URL, shared by the config check (src/config/parts.ts) and the client
 * (src/backends/redis-endpoint.ts), so that a URL the config accepts is one the client can read.
 */

export const SENTINEL_SCHEME = /^sentinel:\/\//i;

export interface SentinelUrl {
  sentinels: { host: string; port: number }[];
  name?: string;
  db: number;
  username?: string;
  password?: string;
}

/**
 * `sentinel://:pw@h1:26379;sentinel://h2:26379/mymaster` → hosts, master name, db. A numeric
 * path is the db (Celery's form puts `master_name` in transport options instead), any other path
 * is the master's name. The password is the master's, as kombu uses it.
 */
export function parseSentinelUrl(url: string): SentinelUrl {
  const out: SentinelUrl = { sentinels: [], db: 0 };
  for (const part of url.split(';')) {
    const trimmed = part.trim();
    if (!trimmed) continue;
    const parsed = new URL(trimmed.replace(SENTINEL_SCHEME, 'redis://'));
    out.sentinels.push({ host: parsed.hostname, port: Number(parsed.port || 26379) });
    if (parsed.password) out.password = decodeURIComponent(parsed.password);
    if (parsed.username) out.username = decodeURIComponent(parsed.username);
    for (const segment of parsed.pathname.split('/').filter(Boolean)) {
      if (/^\d+$/.test(segment)) out.db = Number(segment);
      else out.name = decodeURIComponent(segment);
    }
  }
  return out;
}

/**
 * Whether the Redis client can read `url` as it will when it connects: every `;` part of a
 * Sentinel URL, or the one URL of a plain, TLS or Cluster node, with its port and the
 * percent-escapes of its user and password. A password holding `#`, `/` or `?` (which end the
 * host part of a URL), or a `%` that starts no escape, is not readable.
 */
export function isReadableRedisUrl(url: string): boolean {
  try {
    if (SENTINEL_SCHEME.test(url)) {
      parseSentinelUrl(url);
    } else {
      const parsed = new URL(url);
      decodeURIComponent(parsed.username);
      decodeURIComponent(parsed.password);
    }
    return true;
  } catch {
    return false;
  }
}
