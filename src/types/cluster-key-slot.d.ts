// ioredis' own dependency for Redis Cluster's key → slot map; it ships no types of its own.
declare module 'cluster-key-slot' {
  /** The cluster slot (0-16383) of `key`, by its {hash-tag} when it has one. */
  export default function calculateSlot(key: string | Buffer): number;
}
