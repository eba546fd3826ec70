import { runDemo } from './run.js';

// The entry point of `npm run demo`: the real process around runDemo.
const code = await runDemo({
  argv: process.argv.slice(2),
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  onSignal(cleanup) {
    const onSignal = (signal: NodeJS.Signals) => {
      void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    };
  },
});
process.exit(code);
