/**
 * The seams to heavy npm packages: the only places queue-ops loads a package with `import()`
 * rather than at start.
 *
 * Why: the command line is run by people in an incident and by scripts every few seconds, and
 * most of its start-up time is spent loading modules. A command must load only what it uses, so
 * these libraries stay behind a seam:
 *   - each BullMQ major: `bullmq` (6) or `bullmq5`, only when an action runs BullMQ's own code on a
 *     queue of that layout (status, dlq and workers read Redis directly and need neither);
 *   - the Kubernetes client, for `kubernetes` worker groups;
 *   - echarts and resvg, for charts;
 *   - Bolt, for the command line's few Slack posts (the bot, `src/transports/slack/bot.ts`,
 *     imports it at the top);
 *   - Node's `child_process`, for `compose` worker groups.
 *
 * Our own modules that stand in front of a heavy package (the store drivers, the Slack senders,
 * the command line's runtime) are loaded by a named `load…()` in the one module that uses them,
 * beside its use: `openStore` loads `pg` or `better-sqlite3` through its own store module, the
 * command line's entry loads its runtime. This file imports nothing of ours, so it stays at the
 * bottom of the layers (docs/architecture.md).
 *
 * The rule for new code: a heavy library (Bolt or `@slack/web-api`, `pg`, BullMQ,
 * `@kubernetes/client-node`, echarts, resvg, prom-client…) that some verbs or some configs do not
 * need is not imported at the top of a module the command line reaches. Add a `load…()` here and
 * call it where the library is used; import only types statically (`import type`).
 * test/cli/lazy-loading.test.ts runs the built command line and fails when `--help` or
 * `--json status` loads one of these libraries, and when a package is `import()`ed outside this file.
 */

/** BullMQ 5.x, for queues written by BullMQ ≤ 5 (or BullMQ Pro ≤ 7). */
export const loadBullmq5 = () => import('bullmq5');

/** BullMQ 6.x, for queues written by BullMQ 6. */
export const loadBullmq6 = () => import('bullmq');

/** The Kubernetes client, for `kubernetes` worker groups (scale, workers). */
export const loadKubernetesClient = () => import('@kubernetes/client-node');

/** Bolt (its Web API client), for the command line's few Slack posts: the audit channel read back as a witness. */
export const loadBolt = () => import('@slack/bolt');

/** ECharts, for `trend`'s chart and the charts in alert threads (rendered server-side to SVG). */
export const loadEcharts = () => import('echarts');

/** resvg (native), which turns the chart's SVG into the PNG Slack shows. */
export const loadResvg = () => import('@resvg/resvg-js');

/**
 * Node's child processes, for `compose` worker groups (`docker compose`): loading them also
 * initialises dgram and the socket list, which no other command needs.
 */
export const loadChildProcess = () => import('node:child_process');
