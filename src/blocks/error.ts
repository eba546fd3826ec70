import { fitEscaped, section } from './kit.js';
import { SlackLimits } from './limits.js';
import type { Message } from './message.js';

/**
 * A one-line answer for an expected failure (unknown queue, Redis down, denied…). The line is
 * escaped here: it usually quotes what the user typed or what Redis said.
 */
export function errorMessage(line: string): Message {
  const safe = fitEscaped(line.trim() || '?', SlackLimits.sectionText - 20);
  return {
    text: fitEscaped(line.trim() || '?', 1000),
    blocks: [section(`:warning: ${safe}`)],
  };
}
