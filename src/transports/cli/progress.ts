import { progressLine } from '../../approvals/blocks.js';
import type { ActionProgress, ProgressListener } from '../../approvals/service.js';
import type { Locale } from '../../i18n/index.js';

const WIDTH = 24;

/** `[#########...............] Purging… 340,000 of 1,000,000, 34 %, ~12 s left` (pure). */
export function progressBar(line: string, progress: ActionProgress): string {
  const ratio = progress.total > 0 ? Math.min(1, progress.done / progress.total) : 1;
  const filled = Math.round(ratio * WIDTH);
  return `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${line}`;
}

/**
 * A progress bar redrawn in place on a terminal's stderr (never on stdout: `--json` stays one
 * object), at most every `everyMs`. `end()` moves past it once the action is over.
 */
export function createProgressBar(options: {
  write: (text: string) => void;
  locale: Locale;
  now?: () => number;
  everyMs?: number;
}): { listener: ProgressListener; end(): void } {
  const now = options.now ?? Date.now;
  const everyMs = options.everyMs ?? 100;
  let since: { at: number; done: number } | undefined;
  let drawnAt = 0;
  let drawn = false;
  return {
    listener(request, progress) {
      const at = now();
      since ??= { at, done: progress.done };
      if (at - drawnAt < everyMs && progress.done < progress.total) return;
      drawnAt = at;
      drawn = true;
      const line = progressLine(request.action, progress, since, at, options.locale);
      options.write(`\r${progressBar(line, progress)}\x1b[K`);
    },
    end() {
      if (drawn) options.write('\n');
      drawn = false;
    },
  };
}
