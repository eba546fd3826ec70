import { runDemo } from './run.js';

// The entry point of `npm run demo`: the real process around runDemo.
let stopEverything: (() => Promise<void>) | undefined;
let exiting = false;
const exitAfterCleanup = (code: number) => {
  if (exiting) return;
  exiting = true;
  void (stopEverything?.() ?? Promise.resolve()).finally(() => process.exit(code));
};
// `npm run demo | head`: a closed stdout must still stop redis-server and the workers.
process.stdout.on('error', () => exitAfterCleanup(0));

const code = await runDemo({
  argv: process.argv.slice(2),
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  onSignal(cleanup) {
    stopEverything = cleanup;
    const onSignal = (signal: NodeJS.Signals) => exitAfterCleanup(signal === 'SIGINT' ? 130 : 143);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  },
});
if (!exiting) process.exit(code);
