/**
 * Escapes text for Slack mrkdwn. Slack only needs `&`, `<` and `>` escaped; with those gone, job
 * data or an error message can never form `<!channel>`, `<@U…>` or `<http://…|link>`.
 */
export function escapeMrkdwn(text: string): string {
  return showInvisible(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(BACKTICK_RUN, (run) => "'".repeat(run.length));
}

/**
 * Two or more backticks in a row: ``` opens a code block that runs over the following lines
 * (the next job's line, the bot's own table) until another closes it. No template of ours
 * writes a run, so in escaped text one can only have come from a queue name, a job or an error;
 * it is shown as quotes. A single backtick stays: it cannot leave its line.
 */
const BACKTICK_RUN = /`{2,}/g;

/**
 * Characters that change how text reads without being seen: zero-width spaces and non-joiners,
 * the word joiner and invisible operators, a byte-order mark, and the bidi controls that can show
 * `gpj.exe` as `exe.jpg` or reverse the rest of a line. The zero-width joiner is in its own
 * pattern: inside an emoji sequence (👩‍💻) it is what draws one emoji, and is kept there.
 */
const INVISIBLE = /[\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const STRAY_JOINER =
  /(?<!\p{Extended_Pictographic}|\p{Emoji_Modifier}|\ufe0f)\u200d|\u200d(?!\p{Extended_Pictographic})/gu;

/**
 * Shows each invisible or direction-changing character in untrusted text as its code point
 * (`[U+202E]`), so that a queue or worker named to look like another, or an error that reverses
 * the line after it, reads as what it is. Used by `escapeMrkdwn` and for plain_text from Redis.
 */
export function showInvisible(text: string): string {
  const code = (c: string) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`;
  return text.replace(INVISIBLE, code).replace(STRAY_JOINER, code);
}

/**
 * Escapes and also neutralises formatting characters, for names shown inside `*bold*` or
 * `` `code` `` so that a name like `a*b` cannot break the formatting around it.
 */
export function escapeInline(text: string): string {
  return escapeMrkdwn(text).replace(/[`*_~]/g, (c) => `\u200b${c}\u200b`);
}

/** Cuts text to at most `max` characters, marking the cut with an ellipsis. */
export function cutWithEllipsis(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1))}…`;
}
