// The small schema pieces more than one part of the config uses (see schema.ts for why
// `zod/mini`: the same checks and messages as the chained API, written as functions).
import * as z from 'zod/mini';
import { isReadableRedisUrl } from '../lib/redis-url.js';
import { parseDuration } from './duration.js';
import type { ConfigProblems } from './problems.js';

/** A string of at least one character (`z.string().min(1)`). */
export const nonEmpty = () => z.string().check(z.minLength(1));

/** An integer in [min, max] (`z.number().int().min(min).max(max)`). */
export const intIn = (min: number, max: number) => z.number().check(z.int(), z.minimum(min), z.maximum(max));

/** The pieces worded by one locale's problems `p`, shared by the systems and the rest of the config. */
export function buildConfigParts(p: ConfigProblems) {
  /**
   * A URL the Redis client can also read, as it will when it connects (src/lib/redis-url.ts): one
   * that only looks right (a password with `#` in it) would otherwise fail every command later.
   */
  const readable = z.refine<string>(
    (url) => !/^(rediss?|sentinel):\/\//i.test(url) || isReadableRedisUrl(url),
    {
      error: p.unreadableRedisUrl,
    },
  );
  const redisUrl = z
    .string({ error: p.redisUrl })
    .check(z.regex(/^rediss?:\/\/.+/, { error: p.redisUrl }), readable);

  /** Also Celery's Sentinel broker form: `sentinel://h1:26379;sentinel://h2:26379/mymaster`. */
  const watchedRedisUrl = z
    .string({ error: p.watchedRedisUrl })
    .check(z.regex(/^(rediss?|sentinel):\/\/.+/, { error: p.watchedRedisUrl }), readable);

  const slackChannelId = () => z.string().check(z.regex(/^[CGD][A-Z0-9]+$/, { error: p.slackChannelId }));

  /** A link shown as a link: only `https:`, and nothing that would end Slack's `<url|label>` early. */
  const httpsUrl = z.string({ error: p.httpsUrl }).check(
    z.refine(
      (text) => {
        if (text.length > 500 || /[\s<>|]/.test(text)) return false;
        try {
          return new URL(text).protocol === 'https:';
        } catch {
          return false;
        }
      },
      { error: p.httpsUrl },
    ),
  );

  const principal = z.string({ error: p.principal }).check(
    z.regex(/^(\*|[UWS][A-Z0-9]+)$/, {
      error: p.principal,
    }),
  );

  const duration = z.pipe(
    z.string({ error: p.duration }).check(
      z.refine((text) => parseDuration(text) !== undefined, {
        error: p.duration,
      }),
    ),
    z.transform((text: string) => parseDuration(text) as number),
  );

  return { redisUrl, watchedRedisUrl, slackChannelId, httpsUrl, principal, duration };
}

export type ConfigParts = ReturnType<typeof buildConfigParts>;
