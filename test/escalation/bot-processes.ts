import { createQueueOps, type QueueOps } from '../../src/app.js';
import type { Config } from '../../src/config/schema.js';
import { createEscalation, type Escalation } from '../../src/escalation/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { createAlertWebClient, createSlackSender } from '../../src/transports/slack/alerts.js';

/**
 * Bot processes for the escalation tests: each its own runtime and monitor (on the store its
 * config names: two bots on one SQLite file are two processes sharing it), all on the one clock
 * the test sets, posting through Slack's Web API at `slackUrl` (nock'd by the test).
 */
export function botProcesses(slackUrl: string) {
  const logger = createLogger({ level: 'silent' });
  const running: QueueOps[] = [];
  const bots = {
    /** The time every bot reads, epoch ms. */
    clock: 0,

    /** `slackTimeoutMs: 0` takes the Web API client's cut-off away: a Slack that hangs hangs for good. */
    async start(
      config: Config,
      options: { slackTimeoutMs?: number } = {},
    ): Promise<{ runtime: QueueOps; escalation: Escalation }> {
      const runtime = await createQueueOps({ config, env: {}, logger, now: () => new Date(bots.clock) });
      running.push(runtime);
      const sender = createSlackSender(
        createAlertWebClient('xoxb-test', { apiUrl: `${slackUrl}/api/`, timeoutMs: options.slackTimeoutMs }),
        logger,
        'en',
      );
      const escalation = createEscalation({ runtime, logger, slack: sender, label: 'test' });
      return { runtime, escalation };
    },

    /** One tick of a bot's monitor at `at` (the clock moves there), then its outbox drained. */
    async tick(escalation: Escalation, at: number) {
      bots.clock = at;
      const outcome = await escalation.monitor.tick();
      const drained = await escalation.outbox.drain();
      return { outcome, drained };
    },

    async closeAll() {
      for (const runtime of running.splice(0)) await runtime.close();
    },
  };
  return bots;
}
