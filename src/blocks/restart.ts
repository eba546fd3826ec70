import { type Locale, messages } from '../i18n/index.js';
import { composeBase } from '../scalers/compose.js';
import type { RestartPlan, RestartReport, RestartTarget } from '../scalers/types.js';

/** What the preview says each target gets: the deployment, the exact docker command, the workers. */
function plannedActions(plan: RestartPlan, locale: Locale, compose?: ComposeCommand): string[] {
  const t = messages(locale).restart;
  if (plan.type === 'kubernetes') return plan.targets.map((x) => t.rollout(x.name, x.before ?? null));
  if (plan.type === 'compose')
    return plan.targets.map((x) =>
      t.composeRestart(
        compose ? ['docker', ...composeBase(compose), 'restart', compose.service].join(' ') : x.name,
        x.before ?? null,
      ),
    );
  const names = (pick: (x: RestartTarget) => boolean) => plan.targets.filter(pick).map((x) => x.name);
  const out: string[] = [];
  const pooled = names((x) => x.method === 'pool_restart');
  const shut = names((x) => x.method === 'shutdown' && x.reason === undefined);
  const fallback = names((x) => x.method === 'shutdown' && x.reason === 'poolRestartsOff');
  if (pooled.length > 0) out.push(t.poolRestart(pooled));
  if (shut.length > 0) out.push(t.shutdown(shut));
  if (fallback.length > 0) out.push(t.shutdownFallback(fallback));
  return out;
}

/** The docker command line the preview shows, as the scaler will run it. */
export interface ComposeCommand {
  project: string;
  file: string;
  envFile?: string;
  service: string;
}

function checkText(plan: RestartPlan, locale: Locale): string {
  const t = messages(locale).restart;
  if (plan.workerNames?.length === 0) return t.checkNone;
  if (plan.workerNames) return t.checkNames(plan.workerNames, plan.timeoutSeconds);
  return plan.type === 'celery-pool' ? t.checkPool(plan.timeoutSeconds) : t.checkSystem(plan.timeoutSeconds);
}

/** The one-line preview of a restart (plain text; the request message escapes it). */
export function restartPreview(plan: RestartPlan, locale: Locale, compose?: ComposeCommand): string {
  const t = messages(locale);
  return t.restart.preview(
    `${plan.system}/${plan.group}`,
    t.scale.typeLabel[plan.type] ?? plan.type,
    plannedActions(plan, locale, compose),
    checkText(plan, locale),
  );
}

function targetOutcome(report: RestartReport, target: RestartTarget, locale: Locale): string {
  const t = messages(locale).restart;
  if (target.method === 'rollout') {
    const r = report.rollout;
    if (!r) return target.name;
    return r.complete
      ? t.rolloutDone(target.name, r.available, r.desired)
      : t.rolloutPending(target.name, r.updated, r.available, r.desired, r.total);
  }
  if (target.method === 'compose-restart')
    return t.composeDone(target.name, target.before ?? null, target.after ?? null);
  if (target.poolRestartsOff) return t.poolRestartsOff(target.name);
  if (target.method === 'shutdown') return t.workerShutdown(target.name);
  return t.workerAnswer(target.name, target.method, target.answer ?? '');
}

/** What a restart did and who came back, from the stored result (plain text). */
export function restartOutcome(report: RestartReport, locale: Locale): string {
  const t = messages(locale).restart;
  const parts = [`${report.targets.map((x) => targetOutcome(report, x, locale)).join('; ')}.`];
  const c = report.comeBack;
  if (!c.checked) parts.push(t.notChecked);
  else if (c.before.length === 0) parts.push(t.noneBefore);
  else if (c.complete) parts.push(t.allBack(c.before.length, c.waitedSeconds, [...c.back, ...c.fresh]));
  else {
    parts.push(t.notAllBack(c.back.length + c.fresh.length, c.before.length, c.waitedSeconds));
    if (c.back.length > 0) parts.push(t.backNames(c.back));
    if (c.fresh.length > 0) parts.push(t.freshNames(c.fresh));
    if (c.missing.length > 0) parts.push(t.missingNames(c.missing));
    if (c.notRestarted.length > 0) parts.push(t.notRestartedNames(c.notRestarted));
  }
  if (c.checked && c.back.length + c.fresh.length + c.notRestarted.length === 0) parts.push(t.noneNow);
  return parts.join(' ');
}
