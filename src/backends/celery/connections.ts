import type { Redis } from 'ioredis';
import type { CelerySystemConfig } from '../../config/schema.js';
import {
  type ConnectionRole,
  createRedisClient,
  type RedisClientOptions,
  roleOptions,
} from '../redis-client.js';
import { siblingEndpoint, systemEndpoint } from '../redis-endpoint.js';

export interface CeleryConnections {
  /** A new, not yet connected client to the broker. */
  broker(role: ConnectionRole): Redis;
  /** A new client to the result backend (the broker's endpoint when they are the same Redis). */
  results(role: ConnectionRole): Redis;
  /** The result backend is another Redis than the broker. */
  readonly separateResults: boolean;
}

/**
 * The one way the Celery backend connects to its system's Redis, for every path: reads, pidbox,
 * the failure index and its subscriber, and the purger. Each connection gets the system's whole
 * endpoint (TLS files, the Sentinel list and master name); the result backend the same TLS files
 * (see `siblingEndpoint`). None is opened from the bare URL.
 */
export function celeryConnections(
  system: Pick<CelerySystemConfig, 'redis' | 'tls' | 'sentinel' | 'resultBackend'>,
  defaults: Pick<RedisClientOptions, 'connectTimeoutMs' | 'commandTimeoutMs'> = {},
): CeleryConnections {
  const broker = systemEndpoint(system);
  const resultUrl = system.resultBackend ?? system.redis;
  const separateResults = resultUrl !== system.redis;
  const results = separateResults ? siblingEndpoint(resultUrl, broker) : broker;
  return {
    broker: (role) => createRedisClient(broker, roleOptions(defaults, role)),
    results: (role) => createRedisClient(results, roleOptions(defaults, role)),
    separateResults,
  };
}
