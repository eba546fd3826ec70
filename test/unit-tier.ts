/**
 * The unit tier (`npm run test:unit`): test files that need no Redis, no child process and no
 * network, run without the global setup (no private redis-servers, no build of dist/). `npm test`
 * still runs them with everything else.
 *
 * Membership is this list, never a glob: a new test file is in the integration tier until it is
 * added here, and `test/architecture/test-tiers.test.ts` fails when a listed file (or a test
 * helper it imports) reaches for Redis, a process, Slack's HTTP side or the network.
 */
export const UNIT_TESTS: readonly string[] = [
  'test/approvals/blocks.test.ts',
  'test/architecture/imports.test.ts',
  'test/architecture/system-kinds.test.ts',
  'test/architecture/test-tiers.test.ts',
  'test/architecture/verbs-generated.test.ts',
  'test/archive/archive.test.ts',
  'test/audit/audit.test.ts',
  'test/audit/blocks.test.ts',
  'test/audit/keys.test.ts',
  'test/background/scheduler.test.ts',
  'test/backends/bullmq/client-list.test.ts',
  'test/backends/celery/envelope.test.ts',
  'test/backends/celery/formats.test.ts',
  'test/backends/facts.test.ts',
  'test/backends/queue-names.test.ts',
  'test/blocks/dlq.test.ts',
  'test/blocks/escaping.test.ts',
  'test/blocks/format-numbers.test.ts',
  'test/blocks/properties.test.ts',
  'test/blocks/queue-context.test.ts',
  'test/blocks/queue-flags.test.ts',
  'test/blocks/render-text.test.ts',
  'test/blocks/status.test.ts',
  'test/blocks/validate.test.ts',
  'test/blocks/workers-help-error.test.ts',
  'test/cli/args.test.ts',
  'test/commands/help.test.ts',
  'test/commands/parse.test.ts',
  'test/commands/status-render.test.ts',
  'test/commands/verbs.test.ts',
  'test/config/example-config.test.ts',
  'test/config/load.test.ts',
  'test/config/queue-context.test.ts',
  'test/deploy/manifests.test.ts',
  'test/deploy/slack-manifest.test.ts',
  'test/escalation/rules.test.ts',
  'test/escalation/trend-chart.test.ts',
  'test/guards/policy.test.ts',
  'test/hostile/config-fuzz.test.ts',
  'test/i18n/catalogs.test.ts',
  'test/lib/deferred-logger.test.ts',
  'test/lib/idle-collector.test.ts',
  'test/lib/logger.test.ts',
  'test/lib/suggest.test.ts',
  'test/purge/retention.test.ts',
  'test/store/group-commit.test.ts',
  'test/store/open-store.test.ts',
];
