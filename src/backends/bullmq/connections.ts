import type { Redis } from 'ioredis';
import type { BullmqSystemConfig } from '../../config/schema.js';
import {
  type ConnectionRole,
  createRedisClient,
  createRedisCluster,
  type RedisClientOptions,
  roleOptions,
} from '../redis-client.js';
import { systemEndpoint } from '../redis-endpoint.js';

/** Opens a new, not yet connected client to the system's Redis (see `bullmqConnections`). */
export type Connect = (role: ConnectionRole) => Redis;

/**
 * The one way the BullMQ backend connects to its system's Redis, for every path: the read
 * client, pause and resume, `fail` and its job lock, and the purger. Each connection gets the
 * system's whole endpoint (TLS files, the Sentinel list and master name) and, with `cluster: true`,
 * the Cluster client over `redis` and `nodes`; none is opened from the bare URL.
 */
export function bullmqConnections(
  system: Pick<BullmqSystemConfig, 'redis' | 'tls' | 'sentinel' | 'cluster' | 'nodes'>,
  defaults: Pick<RedisClientOptions, 'connectTimeoutMs' | 'commandTimeoutMs'> = {},
): Connect {
  const endpoint = systemEndpoint(system);
  return (role) => {
    const options = roleOptions(defaults, role);
    return system.cluster
      ? // Everything a queue needs lives in its `{hash-tag}` slot, where a Cluster client speaks the
        // same commands as a plain one; only SCAN has to visit every master (scanQueues).
        (createRedisCluster(endpoint, system.nodes ?? [], options) as unknown as Redis)
      : createRedisClient(endpoint, options);
  };
}
