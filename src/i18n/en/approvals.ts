const n = (value: number) => value.toLocaleString('en-US');

export const approvals = {
  previewPause: (target: string, waiting: number, workers: number) =>
    `pause ${target}: ${n(waiting)} waiting job${waiting === 1 ? '' : 's'} stop being picked up` +
    (workers > 0 ? ` by ${n(workers)} worker${workers === 1 ? '' : 's'}` : '') +
    '; jobs already running finish.',
  previewResume: (target: string, waiting: number) =>
    `resume ${target}: ${n(waiting)} waiting job${waiting === 1 ? '' : 's'} will be picked up again.`,
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
      ':warning: Interrupted: the bot stopped while this was running. Check the queue before asking again.',
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
  interruptedError: 'the bot stopped while this was running; check the queue before asking again',
};
