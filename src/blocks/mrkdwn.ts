/**
 * Escapes text for Slack mrkdwn. Slack only needs `&`, `<` and `>` escaped; with those gone, job
 * data or an error message can never form `<!channel>`, `<@U…>` or `<http://…|link>`.
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Escapes and also neutralises formatting characters, for names shown inside `*bold*` or
 * `` `code` `` so that a name like `a*b` cannot break the formatting around it.
 */
export function escapeInline(text: string): string {
  return escapeMrkdwn(text).replace(/[`*_~]/g, (c) => `\u200b${c}\u200b`);
}

/** Cuts text to at most `max` characters, marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}
