import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_GROUPS } from './config.js';

/** Where the stand-in `docker` lives and what it keeps. */
export interface StandInDocker {
  /** The directory to put first on the demo's PATH. */
  binDir: string;
  /** One JSON argument list per line, each call the demo's `scale` and `restart` made. */
  callsLog: string;
}

/**
 * The stand-in `docker` the demo's Compose worker group is scaled through: it records every
 * argument list it is started with, answers `compose … ps --format json` with one JSON line per
 * running container (as Compose 2.21+ prints them), and for `up … --scale <service>=<n>` sets the
 * service to n containers; `restart` is recorded and succeeds. No container runs; what `docker compose` would have been asked is in
 * `callsLog`. It runs with this Node (its absolute path), not whatever `node` the PATH finds.
 */
const script = (node: string) => `#!${node}
const fs = require('fs');
const path = require('path');
const dir = path.join(__dirname, '..', 'docker');
const args = process.argv.slice(2);
fs.appendFileSync(path.join(dir, 'calls.log'), JSON.stringify(args) + '\\n');
const statePath = path.join(dir, 'state.json');
const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
const project = args[args.indexOf('-p') + 1];
if (args[0] === 'compose' && args.includes('ps')) {
  for (const [service, n] of Object.entries(state))
    for (let i = 1; i <= n; i++)
      console.log(JSON.stringify({ Name: project + '-' + service + '-' + i, Service: service, State: 'running' }));
  process.exit(0);
}
if (args[0] === 'compose' && args.includes('restart')) process.exit(0);
if (args[0] === 'compose' && args.includes('up') && args.includes('--scale')) {
  const spec = args[args.indexOf('--scale') + 1];
  const eq = spec.lastIndexOf('=');
  state[spec.slice(0, eq)] = Number(spec.slice(eq + 1));
  fs.writeFileSync(statePath, JSON.stringify(state));
  process.exit(0);
}
process.stderr.write('the demo stand-in docker only answers compose ps, compose up --scale and compose restart\\n');
process.exit(2);
`;

/** Writes the stand-in `docker`, its state (one running container) and the compose file it names. */
export function writeStandInDocker(workDir: string): StandInDocker {
  const binDir = join(workDir, 'bin');
  const stateDir = join(workDir, 'docker');
  mkdirSync(binDir, { recursive: true });
  mkdirSync(stateDir, { recursive: true });
  const docker = join(binDir, 'docker');
  writeFileSync(docker, script(process.execPath));
  chmodSync(docker, 0o755);
  const { service } = DEMO_GROUPS.compose;
  writeFileSync(join(stateDir, 'state.json'), JSON.stringify({ [service]: 1 }));
  const callsLog = join(stateDir, 'calls.log');
  writeFileSync(callsLog, '');
  // The file the group's config names, as a real deployment would have it; the stand-in never reads it.
  writeFileSync(
    join(workDir, 'docker-compose.yml'),
    [
      '# Written by `npm run demo` for its stand-in docker; no container is started.',
      'services:',
      `  ${service}:`,
      '    image: pushizo/worker:demo',
      '    command: ["node", "worker.js", "--queues", "dispatch-ios,dispatch-android"]',
      '',
    ].join('\n'),
  );
  return { binDir, callsLog };
}
