/**
 * The seams: the only places queue-ops loads code with `import()` rather than at start.
 *
 * Why: the command line is run by people in an incident and by scripts every few seconds, and
 * most of its start-up time is spent loading modules. A command must load only what it uses, so
 * these libraries stay behind a seam:
 *   - the bot's store driver: `pg` only when `store:` is PostgreSQL, `better-sqlite3` only for SQLite;
 *   - each BullMQ major: `bullmq` (6) or `bullmq5`, only when an action runs BullMQ's own code on a
 *     queue of that layout (status, dlq and workers read Redis directly and need neither);
 *   - the command line's runtime (config, store, backends, commands), so `--help` and bad flags
 *     answer without it.
 * Bolt and the Slack Web API are loaded only by `src/main.ts` (the bot), which posts to Slack.
 *
 * The rule for new code: a heavy library (Bolt or `@slack/web-api`, `pg`, BullMQ,
 * `@kubernetes/client-node`, echarts, resvg, prom-client…) that some verbs or some configs do not
 * need is not imported at the top of a module the command line reaches. Add a `load…()` here and
 * call it where the library is used; import only types statically (`import type`). Do not write
 * `import()` anywhere else: test/cli/lazy-loading.test.ts runs the built command line and fails
 * when `--help` or `--json status` loads one of these libraries.
 */

import type { Catalog } from '../i18n/locales.js';

type CliWords = Catalog['cli'];

/** The PostgreSQL store (and `pg`), for `store: postgres://…`. */
export const loadPostgresStore = () => import('../store/postgres.js');

/** The SQLite store (and `better-sqlite3`), for `store: sqlite:…`. */
export const loadSqliteStore = () => import('../store/sqlite.js');

/** BullMQ 5.x, for queues written by BullMQ ≤ 5 (or BullMQ Pro ≤ 7). */
export const loadBullmq5 = () => import('bullmq5');

/** BullMQ 6.x, for queues written by BullMQ 6. */
export const loadBullmq6 = () => import('bullmq');

/** The Kubernetes client, for `kubernetes` worker groups (scale, workers). */
export const loadKubernetesClient = () => import('@kubernetes/client-node');

/**
 * Bolt's Web API client and the bot's logger adapter, for the command line's few Slack posts
 * (the audit channel read back as a witness).
 */
export const loadSlackWebApi = () =>
  Promise.all([import('@slack/bolt'), import('../transports/slack/create-app.js')]).then(([bolt, app]) => ({
    webApi: bolt.webApi,
    boltLogger: app.boltLogger,
  }));

/**
 * `bin/stale-build.js` (plain JS beside the command line, outside src/), for `npm start` run from
 * a clone's dist/: it says when src/ changed after the build. `href` is its URL.
 */
export const loadStaleBuild = (href: string) =>
  import(href) as Promise<{ staleBuildNote(root: string): string | undefined }>;

/** The alert sender over Slack's Web API, for `monitor --once` with `SLACK_BOT_TOKEN`. */
export const loadSlackAlerts = () => import('../transports/slack/alerts.js');

/**
 * Everything the command line needs after its arguments have been read. In the bundle that
 * `bin/queue-ops.js` runs, this `import()` loads scripts/cli-runtime-loader.js instead, which
 * compiles the same module (linked with all it imports) with V8's code cache (scripts/build.js).
 */
export const loadCliRuntime = () => import('../transports/cli/run.js');

/** ECharts, for `trend`'s chart and the charts in alert threads (rendered server-side to SVG). */
export const loadEcharts = () => import('echarts');

/** resvg (native), which turns the chart's SVG into the PNG Slack shows. */
export const loadResvg = () => import('@resvg/resvg-js');

/**
 * The command line's own words in a locale other than English (`src/i18n/<locale>/cli.ts`), for
 * `--help` when the config asks for it; rejects when there is no such locale. The bundle holds
 * each locale's words as a chunk of its own.
 */
export const loadCliWords = (locale: string): Promise<{ cli: CliWords }> =>
  import(`../i18n/${locale}/cli.js`);
