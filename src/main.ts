import { pathToFileURL } from 'node:url';
import { messages } from './i18n/index.js';
import { scrubSecrets } from './lib/logger.js';
import { type MainIo, type RunningBot, startBot } from './transports/slack/bot.js';

type Env = Record<string, string | undefined>;

/**
 * `npm start`. Checks the environment and the config before connecting to anything, then builds
 * the services and starts Slack. Resolves with an exit code when it cannot start (2: no Slack
 * transport configured, 1: anything else), or with the running bot.
 */
export async function main(env: Env, io: MainIo): Promise<number | RunningBot> {
  return startBot(env, io);
}

/**
 * `npm start` runs dist/ as it was built and never builds; a clone whose src/ changed since says
 * so in one line naming `npm run build` (bin/stale-build.js, shared with the command line).
 */
async function staleBuildNote(): Promise<string | undefined> {
  // bin/stale-build.js is plain JS beside the command line, outside src/: loaded only from a dist/ build.
  const loadStaleBuild = (href: string) =>
    import(href) as Promise<{ staleBuildNote(root: string): string | undefined }>;
  if (!import.meta.url.includes('/dist/')) return undefined;
  try {
    const module = await loadStaleBuild(new URL('../bin/stale-build.js', import.meta.url).href);
    return module.staleBuildNote(new URL('..', import.meta.url).pathname);
  } catch {
    // An image without bin/ or src/: nothing to compare.
    return undefined;
  }
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) {
  void staleBuildNote().then((note) => {
    if (note) process.stderr.write(note);
  });
  const io: MainIo = {
    stderr: (line) => process.stderr.write(`${line}\n`),
    stdout: (line) => process.stdout.write(`${line}\n`),
  };
  main(process.env, io).then(
    (result) => {
      if (typeof result === 'number') {
        // Whatever a start that failed half-way left open (a socket, a timer) does not keep the
        // process up; the lines above are written synchronously.
        process.exit(result);
      }
      const onSignal = (signal: NodeJS.Signals) => {
        result.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
        // A second signal means "now".
        process.once(signal, () => process.exit(1));
      };
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    },
    (error) => {
      const line = messages().slack.startFailed(error instanceof Error ? error.message : String(error));
      process.stderr.write(`${scrubSecrets(line)}\n`);
      process.exitCode = 1;
    },
  );
}
