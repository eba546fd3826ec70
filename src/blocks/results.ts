import type { ResultsReading } from '../backends/queue-backend.js';
import { type Locale, messages } from '../i18n/index.js';
import { formatBytes, formatDuration, formatNumber, formatUtc } from './format.js';
import { context, header, inCode, inline, section } from './kit.js';
import type { KnownBlock, Message } from './message.js';

export interface ResultsView {
  system: string;
  reading: ResultsReading;
  generatedAt: Date;
}

/** `/queue results <system>`: counts, memory, the oldest, and how much of the keyspace was walked. */
export function resultsMessage(view: ResultsView, locale: Locale): Message {
  const t = messages(locale).results;
  const { reading } = view;
  const n = (value: number) => formatNumber(value, locale);
  const lines: string[] = [];
  if (reading.count === 0) lines.push(t.none);
  else {
    lines.push(
      t.counts(
        n(reading.count),
        n(reading.withoutTtl),
        Math.round((reading.withoutTtl / reading.count) * 100),
      ),
      t.memory(formatBytes(reading.bytes, locale)),
    );
    if (reading.oldest)
      lines.push(
        t.oldest(
          formatDuration(Math.max(0, (view.generatedAt.getTime() - reading.oldest.at) / 1000), locale),
          formatUtc(reading.oldest.at, locale),
          inCode(reading.oldest.id, 80),
        ),
      );
  }
  const { sample, estimate } = reading;
  const coverage = sample.complete
    ? t.complete(n(sample.total))
    : t.sampled(n(sample.scanned), n(sample.total), t.budget[sample.stoppedBy] ?? sample.stoppedBy);
  const blocks: KnownBlock[] = [
    header(t.title(view.system)),
    context(messages(locale).workers.updated(formatUtc(view.generatedAt, locale))),
    section(lines.join('\n')),
    context(coverage),
  ];
  if (estimate)
    blocks.push(
      context(t.estimate(n(estimate.count), n(estimate.withoutTtl), formatBytes(estimate.bytes, locale))),
    );
  if (reading.withoutTtl > 0) blocks.push(context(t.hint(inCode(view.system, 80))));
  return { text: t.fallback(inline(view.system, 80), n(reading.count), n(reading.withoutTtl)), blocks };
}
