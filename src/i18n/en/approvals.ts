const n = (value: number) => value.toLocaleString('en-US');

export const approvals = {
  previewPause: (target: string, waiting: number, workers: number) =>
    `pause ${target}: ${n(waiting)} waiting job${waiting === 1 ? '' : 's'} stop being picked up` +
    (workers > 0 ? ` by ${n(workers)} worker${workers === 1 ? '' : 's'}` : '') +
    '; jobs already running finish.',
  previewResume: (target: string, waiting: number) =>
    `resume ${target}: ${n(waiting)} waiting job${waiting === 1 ? '' : 's'} will be picked up again.`,
  /** `retry pushizo/events: 37 failed jobs (of 40), newest first. Errors: 30× APNs 429; 7× …` */
  previewRetry: (
    target: string,
    count: number,
    failed: number,
    topErrors: { error: string; count: number; example?: string }[],
    jobId?: string,
  ) =>
    `retry ${target}: ${jobId ? `failed job ${jobId}` : `${n(count)} failed job${count === 1 ? '' : 's'}${failed > count ? ` of ${n(failed)}, newest first` : ''}`}, run again with their attempts reset.` +
    (topErrors.length > 0
      ? ` Errors: ${topErrors.map((e) => `${n(e.count)}× ${e.error || '(no message)'}${e.example && e.example !== e.error ? ` (e.g. ${e.example})` : ''}`).join('; ')}.`
      : ''),
  /** The last words of an `all` retry's preview: the approver approves these jobs, no others. */
  previewExactly: (count: number) =>
    ` This is exactly what will run: these ${n(count)} job${count === 1 ? '' : 's'}, those still failed when approved, and no others; failures that arrive after this preview are left for another request.`,
  resultRetried: (target: string, retried: number, skipped: number, newIds: boolean, newSincePreview = 0) =>
    `${n(retried)} job${retried === 1 ? '' : 's'} of ${target} ${newIds ? 'sent again as new tasks (old → new ids in the audit trail)' : 'back in the queue'}` +
    (skipped > 0 ? `; ${n(skipped)} no longer failed, left alone` : '') +
    (newSincePreview > 0
      ? `; ${n(newSincePreview)} matching failure${newSincePreview === 1 ? '' : 's'} arrived after the preview and ${newSincePreview === 1 ? 'was' : 'were'} left (ask again to retry ${newSincePreview === 1 ? 'it' : 'them'})`
      : '') +
    '.',
  alreadyPaused: (target: string) => `${target} is already paused; nothing to do.`,
  notPaused: (target: string) => `${target} is not paused; nothing to do.`,
  header: (action: string, target: string) => `Request: ${action} ${target}`,
  requestedBy: (who: string, when: string) => `Requested by ${who} at ${when}`,
  expires: (when: string) => `Expires ${when}`,
  needs: (have: number, need: number) => `Approvals: ${have} of ${need}`,
  approvedBy: (names: string) => `Approved by ${names}`,
  status: {
    pending: ':hourglass_flowing_sand: Waiting for approval',
    approved: ':white_check_mark: Approved, starting',
    executing: ':gear: Running',
    done: ':white_check_mark: Done',
    failed: ':x: Failed',
    denied: ':no_entry: Denied',
    expired: ':alarm_clock: Expired: nobody approved it in time. Ask again if it is still needed.',
    interrupted:
      ':warning: Interrupted: it may have run. The bot stopped, or could not write its outcome, while this was running. Check the queue and `/queue audit` before asking again.',
  } as Record<string, string>,
  deniedBy: (who: string, reason?: string) => `Denied by ${who}${reason ? `: ${reason}` : ''}`,
  duration: (seconds: number) => `took ${seconds < 1 ? '<1' : seconds.toFixed(1)} s`,
  resultPaused: (target: string, workers?: string[]) =>
    `${target} is paused${workers?.length ? ` (workers that answered: ${workers.join(', ')})` : ''}.`,
  resultResumed: (target: string, workers?: string[]) =>
    `${target} is resumed${workers?.length ? ` (workers that answered: ${workers.join(', ')})` : ''}.`,
  resultPauseUnsettled: (target: string, system: string, workers?: string[]) =>
    `The pause of ${target} was sent${workers?.length ? ` and answered by ${workers.join(', ')}` : ''}, ` +
    `but the queue is not paused yet: a worker was still consuming it when the bot stopped waiting. ` +
    `Check \`/queue status ${target}\` and \`/queue workers ${system}\`.`,
  resultResumeUnsettled: (target: string, system: string, workers?: string[]) =>
    `The resume of ${target} was sent${workers?.length ? ` and answered by ${workers.join(', ')}` : ''}, ` +
    `but the queue is still paused: no worker had started consuming it when the bot stopped waiting. ` +
    `Check \`/queue status ${target}\` and \`/queue workers ${system}\`.`,
  approveButton: 'Approve',
  denyButton: 'Deny',
  undoButton: 'Undo this purge',
  confirmTitle: 'Approve this action?',
  confirmText: (preview: string) => `${preview}`,
  confirmYes: 'Approve',
  confirmNo: 'Cancel',
  howToApprove: (id: string) =>
    `Someone else with the role can press Approve, or type \`/queue approve ${id}\`.`,
  pendingHeader: (count: number) =>
    count === 0 ? 'No requests are waiting for approval.' : `Requests waiting for approval: ${count}`,
  pendingLine: (
    id: string,
    action: string,
    target: string,
    who: string,
    expires: string,
    have: number,
    need: number,
  ) => `\`${id}\` ${action} ${target}: asked by ${who}, ${have}/${need} approvals, expires ${expires}`,
  error: (message: string) => `Error: ${message}`,
  noPolicy: (action: string) => `No policy for \`${action}\`.`,
  /** Stored as a failed request's error when the requester is checked again at execution. */
  requesterLostRole: (who: string, role: string) =>
    `requester no longer allowed: ${who} no longer holds the \`${role}\` role, so it did not run`,
  requesterNo2fa: (who: string) =>
    `requester no longer allowed: Slack did not confirm two-factor authentication for ${who}, so it did not run`,
  /** Stored as the error of an execution whose lease ran out: it may have run, whole or in part. */
  interruptedError: (target: string) =>
    `it may have run: its bot stopped, or could not write its outcome, while it was running. Check \`${target}\` (\`/queue status\`, \`/queue audit\`) before asking again`,
  /** Status line of a request that was approved but never started (its bot stopped first). */
  interruptedBeforeStart:
    ':warning: Interrupted before it started: it was approved, but the bot stopped (or could not record the start) before running it. It did not run; ask again if it is still needed.',
  /** Stored as the error of an approved request that no bot ever started. */
  neverStartedError:
    'approved, but never started: the bot stopped (or the store refused its start) before running it, so it did not run',
  /** Stored as a failed request's error when an earlier approver is checked again at execution. */
  approverLostRole: (who: string, role: string) =>
    `approval by ${who} no longer counts: ${who} no longer holds the \`${role}\` role, so it did not run`,
  approverNo2fa: (who: string) =>
    `approval by ${who} no longer counts: Slack did not confirm two-factor authentication for ${who}, so it did not run`,
  /** Where an approval or request typed on the command line came from (`--user` is only a claim). */
  viaCommandLine: (osUser: string) => `via command line, OS user ${osUser}`,
  /** The audit's reason when one OS account tries to be two people. */
  sameOsUserRejected:
    'self-approval: the same OS user on the same host made the request or approved it already',
};
