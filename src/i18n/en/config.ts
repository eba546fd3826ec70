/**
 * What an invalid config file is told, one problem per line after its path
 * (`systems[1].redis: expected a redis://, rediss:// or sentinel:// URL`). The schema is built
 * from these (src/config/schema.ts), so a Turkish config is refused in Turkish.
 */
export const config = {
  redisUrl: 'expected a redis:// or rediss:// URL',
  watchedRedisUrl: 'expected a redis://, rediss:// or sentinel:// URL',
  unreadableRedisUrl:
    'not a URL the Redis client can read: percent-encode # / ? @ % and spaces in the user and password (# as %23, / as %2F, ? as %3F, @ as %40, % as %25, space as %20)',
  hostPort: 'expected host:port',
  slackChannelId: 'expected a Slack channel id',
  queueName: 'expected a queue name without "/" or spaces',
  queueEntry: 'expected a queue name, or { name, owner, runbook, dashboard, notes }',
  owner: 'expected a Slack user group id (S…) or user id (U…/W…)',
  httpsUrl: 'expected an https:// URL (at most 500 characters; no spaces, "<", ">" or "|")',
  name: 'expected a name of letters, digits, "-", "_" or "."',
  groupName: 'expected a group name of letters, digits, "-", "_" or "."',
  kubernetesName: 'expected a Kubernetes name (lower-case, digits, "-")',
  workerGroupType: 'expected type: kubernetes, compose or celery-pool',
  invalidWorkerGroup: 'invalid worker group',
  minAboveMax: 'expected min <= max',
  systemType: 'expected type: bullmq or celery',
  invalidSystem: 'invalid system',
  principal: 'expected "*", a Slack user id (U…/W…) or a user group id (S…)',
  slackUserId: 'expected a Slack user id (U…/W…)',
  osAccount: 'expected an OS account name (no spaces or ":")',
  duration: 'expected a duration like 30s, 2m or 1h',
  queuePattern: 'expected a pattern like "system/queue-*" or "*"',
  metric: (metrics: string) => `expected one of: ${metrics}`,
  aboveOrBelow: 'expected exactly one of `above` or `below`',
  whenNeedsQueueMetric:
    '`when` conditions are about the same queue: the rule’s metric must be a queue metric',
  pagerName: 'a pager name: letters, digits, `.`, `_` or `-`, at most 63',
  pagerUrl: 'an http(s):// URL',
  pagerKeyFromEnv: `write the key as an environment reference (\`"\${PD_ROUTING_KEY}"\`), never in the file`,
  duplicatePager: (name: string, first: string) => `duplicate pager name "${name}" (also ${first})`,
  duplicateRule: (name: string) => `duplicate rule name "${name}"`,
  groupBy: 'expected `none` or a list of: cause, system, severity, rule, queue',
  storeUrl: 'expected sqlite:<path> or postgres://…',
  noSystems: 'expected at least one system',
  sentinelName:
    'expected the Sentinel master name (sentinel.name, or the URL path: sentinel://h:26379/mymaster)',
  clusterPrefix: (prefix: string) =>
    `expected a {hash-tag} prefix on Redis Cluster, as BullMQ requires (e.g. "{${prefix}}")`,
  sentinels: 'expected sentinels: [host:port, …] (or a sentinel:// URL in redis)',
  duplicateSystem: (name: string, first: string) => `duplicate system name "${name}" (also ${first})`,
  celeryPoolOnBullmq: 'celery-pool groups only exist on celery systems; expected kubernetes or compose',
  unknownKey: 'unknown key',
  notYaml: (reason: string) => `not valid YAML: ${reason}`,
  envNotSet: (name: string) => `\${${name}} is not set in the environment`,
  cannotRead: (path: string, reason: string) => `cannot read ${path}: ${reason}`,
};
