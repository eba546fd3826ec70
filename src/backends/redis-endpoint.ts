import { readFileSync } from 'node:fs';
import type { RedisOptions } from 'ioredis';
import { parseSentinelUrl, SENTINEL_SCHEME } from '../lib/redis-url.js';

export { parseSentinelUrl } from '../lib/redis-url.js';

/**
 * How one watched Redis is reached: a plain or TLS URL, a Sentinel group (Celery's
 * `sentinel://h1:26379;sentinel://h2:26379/mymaster` broker form, or `sentinels` + `name`), with
 * optional TLS files. Pure data, taken from a system's config.
 */
export interface RedisEndpoint {
  url: string;
  tls?: { ca?: string; cert?: string; key?: string; servername?: string };
  sentinels?: string[];
  name?: string;
}

/** What `new Redis(options)` needs, and the credentials in it (for the log scrubber). */
export interface ResolvedEndpoint {
  options: RedisOptions;
  /** `host:port` of the server, or `sentinel name@host:port,…`: safe to print. */
  describe: string;
  db: number;
}

export function isSentinelEndpoint(endpoint: RedisEndpoint): boolean {
  return SENTINEL_SCHEME.test(endpoint.url) || (endpoint.sentinels?.length ?? 0) > 0;
}

function splitHostPort(hostPort: string): { host: string; port: number } {
  const at = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
}

function tlsOptions(tls: RedisEndpoint['tls'], readFile: (path: string) => Buffer): RedisOptions['tls'] {
  if (!tls) return {};
  return {
    ...(tls.ca ? { ca: readFile(tls.ca) } : {}),
    ...(tls.cert ? { cert: readFile(tls.cert) } : {}),
    ...(tls.key ? { key: readFile(tls.key) } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
  };
}

/** The db an endpoint URL selects, in any of its forms (Sentinel URLs included). */
export function endpointDb(url: string): number {
  return SENTINEL_SCHEME.test(url) ? parseSentinelUrl(url).db : dbOfUrl(url);
}

/** The endpoint of a system's own Redis. */
export function systemEndpoint(system: {
  redis: string;
  tls?: RedisEndpoint['tls'];
  sentinel?: { sentinels?: string[]; name?: string };
}): RedisEndpoint {
  return {
    url: system.redis,
    ...(system.tls ? { tls: system.tls } : {}),
    ...(system.sentinel?.sentinels ? { sentinels: system.sentinel.sentinels } : {}),
    ...(system.sentinel?.name ? { name: system.sentinel.name } : {}),
  };
}

/**
 * Another Redis of the same system (Celery's result backend): same TLS files; the Sentinel
 * settings only when it is itself a Sentinel URL.
 */
export function siblingEndpoint(url: string, of: RedisEndpoint): RedisEndpoint {
  return {
    url,
    ...(of.tls ? { tls: of.tls } : {}),
    ...(SENTINEL_SCHEME.test(url) && of.name ? { name: of.name } : {}),
  };
}

/** `redis://h:6379/3` → 3 (also for `rediss://`). */
export function dbOfUrl(url: string): number {
  try {
    const segment = new URL(url.replace(SENTINEL_SCHEME, 'redis://')).pathname.replace(/^\//, '');
    const db = Number.parseInt(segment, 10);
    return Number.isFinite(db) && db >= 0 ? db : 0;
  } catch {
    return 0;
  }
}

/**
 * The ioredis options for an endpoint. TLS files are read here, once per client, so a rotated
 * certificate is picked up by the next connection the bot builds.
 */
export function resolveEndpoint(
  endpoint: RedisEndpoint,
  readFile: (path: string) => Buffer = readFileSync,
): ResolvedEndpoint {
  if (isSentinelEndpoint(endpoint)) {
    const fromUrl = SENTINEL_SCHEME.test(endpoint.url)
      ? parseSentinelUrl(endpoint.url)
      : { sentinels: [], db: dbOfUrl(endpoint.url), ...credentials(endpoint.url) };
    const sentinels = [...fromUrl.sentinels, ...(endpoint.sentinels ?? []).map(splitHostPort)];
    const name = endpoint.name ?? fromUrl.name;
    if (!name) throw new Error('a Sentinel endpoint needs the master name (`name`, or the URL path)');
    const tls = endpoint.tls ? tlsOptions(endpoint.tls, readFile) : undefined;
    return {
      options: {
        sentinels,
        name,
        db: fromUrl.db,
        // Follow +switch-master at once instead of reading from a demoted master until the
        // connection happens to break; a write refused as READONLY reconnects to the new one.
        failoverDetector: true,
        reconnectOnError: (error: Error) => (/READONLY/.test(error.message) ? 2 : false),
        ...(fromUrl.username ? { username: fromUrl.username } : {}),
        ...(fromUrl.password ? { password: fromUrl.password } : {}),
        ...(tls ? { tls, enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
      },
      describe: `${name}@${sentinels.map((s) => `${s.host}:${s.port}`).join(',')}`,
      db: fromUrl.db,
    };
  }
  const parsed = new URL(endpoint.url);
  const secure = parsed.protocol === 'rediss:';
  const db = dbOfUrl(endpoint.url);
  return {
    options: {
      host: parsed.hostname.replace(/^\[|\]$/g, ''),
      port: Number(parsed.port || 6379),
      db,
      ...credentials(endpoint.url),
      ...(secure || endpoint.tls ? { tls: tlsOptions(endpoint.tls, readFile) } : {}),
    },
    describe: `${parsed.hostname}:${parsed.port || 6379}`,
    db,
  };
}

function credentials(url: string): { username?: string; password?: string } {
  try {
    const parsed = new URL(url.replace(SENTINEL_SCHEME, 'redis://'));
    return {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    };
  } catch {
    return {};
  }
}

/** Every password in an endpoint's URL (each `;`-separated part of a Sentinel URL too). */
export function endpointSecrets(url: string): string[] {
  const out: string[] = [];
  for (const part of url.split(';')) {
    try {
      const parsed = new URL(part.trim().replace(SENTINEL_SCHEME, 'redis://'));
      if (parsed.password) out.push(decodeURIComponent(parsed.password), parsed.password);
    } catch {
      // not a URL: nothing to scrub
    }
  }
  return [...new Set(out.filter(Boolean))];
}
