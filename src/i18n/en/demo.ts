/** The offline demo and its console (`npm run demo`). */
export const demo = {
  usage: [
    'Usage: npm run demo -- [--scale full|small] [--user U0ALICE] [--db N] [--locale en|tr] [--script "status" …]',
    '',
    '  --scale    full (about 100k BullMQ jobs and 50k Celery messages, the default) or small',
    '  --user     the Slack user id the console acts as (default U0ALICE, the operator;',
    '             U0BOB and U0CAROL are the admins)',
    '  --db       with REDIS_URL: the database number to use (default: the highest empty one)',
    "  --locale   the messages' language: en or tr (the config's `locale:`)",
    '  --script   run these commands instead of opening the console, print each answer, exit',
    '',
    'Without --script and with stdin not a terminal, commands are read from stdin, one per line.',
    'REDIS_URL: an existing Redis to use (only an empty database of its own is touched);',
    'otherwise a private redis-server is started and stopped on exit.',
  ].join('\n'),
  badOption: (detail: string) => `queue-ops demo: ${detail} (see --help)`,
  /** What is wrong with an option, before anything starts. */
  options: {
    unknown: (option: string) => `unknown option ${option}`,
    scale: (value: string) => `--scale must be full or small, not "${value}"`,
    user: (value: string) => `--user must be a Slack user id (U…), not "${value}"`,
    db: '--db must be a number from 0 to 15',
    locale: (value: string, valid: readonly string[]) =>
      `--locale must be one of ${valid.join(', ')}, not "${value}"`,
  },
  noRedis: (reason: string) =>
    `queue-ops demo: no Redis to run on: ${reason}. Install Debian's redis-server package (apt-get install redis-server) or set REDIS_URL to a Redis that answers PING.`,
  redisUrlUnusable: (url: string, reason: string) => `REDIS_URL ${url} is not usable: ${reason}`,
  noFreeDb: 'it has no empty database (1–15) the demo could take',
  dbNotEmpty: (db: number) => `its database ${db} is not empty, and the demo only uses an empty one`,
  startingRedis: 'Started a private redis-server.',
  seedingBullmq: (system: string) => `Seeding ${system} (BullMQ, real Queue.addBulk and a failing Worker)…`,
  seedingCeleryReal: (system: string) =>
    `Seeding ${system} (Celery: a real worker from python3-celery, failing tasks, then the backlog)…`,
  seedingCelerySimulated: (system: string) => `Seeding ${system} (Celery wire format, written directly)…`,
  seeded: (jobs: string, seconds: string) => `Seeded ${jobs} jobs and messages in ${seconds} s.`,
  bannerTitle: 'queue-ops demo: two systems shaped like the Pushizo and Zeus runbooks.',
  bannerRedisPrivate: (url: string) => `Redis:   private redis-server at ${url} (stopped on exit)`,
  bannerRedisShared: (url: string, db: number) =>
    `Redis:   ${url}, database ${db} (only the demo's own keys are removed on exit)`,
  bannerConfig: (path: string) => `Config:  ${path}`,
  bannerCli: (path: string) =>
    `         try the CLI against it: node bin/queue-ops.js --config ${path} --json status`,
  bannerPeople: (operator: string, admin1: string, admin2: string, you: string) =>
    `People:  ${operator} operator · ${admin1} admin · ${admin2} admin. You are ${you}; :user <id> switches who you are.`,
  bannerApprovals: (operator: string, admin1: string, admin2: string) =>
    `Approvals: pause, scale and restart: ${operator} asks, ${admin1} or ${admin2} approves (e.g. pause pushizo/dispatch-ios,`,
  bannerApprovalsThen: (admin1: string, admin2: string) =>
    `           then :user ${admin1} and press Approve). purge and undo: one admin asks (${admin1}), the other (${admin2}) approves.`,
  bannerScaleCompose: (group: string, service: string, log: string) =>
    `Scale:   ${group} is a Compose service (${service}): a stand-in docker on the demo's PATH records each call in ${log}`,
  bannerScalePool: (group: string, worker: string) =>
    `         ${group} is the pool of the real Celery worker ${worker}, resized over pidbox.`,
  bannerScalePoolSimulated: (group: string) =>
    `         ${group} is a Celery pool: with Celery simulated no worker answers, so scaling it is refused.`,
  bannerRestartCompose: (group: string, service: string) =>
    `Restart: restart ${group} runs docker compose restart ${service} through the same stand-in (recorded; no container runs, so no worker is checked after it).`,
  bannerRestartPool: (group: string, worker: string) =>
    `         restart ${group} sends pool_restart to ${worker} (it runs with worker_pool_restarts=True) and checks it answers ping again.`,
  bannerRestartPoolSimulated: (group: string) =>
    `         restart ${group}: with Celery simulated no worker answers, so it is refused.`,
  bannerMonitor: (seconds: number, hours: number) =>
    `Monitor: runs every ${seconds} s inside the demo, over ${hours} h of back-filled samples: try alerts, trend, timeline.`,
  bannerTrend: (path: string) => `Charts:  trend pushizo/dispatch-ios writes its chart to ${path}`,
  bannerFiles: (dir: string) => `Files:   everything the demo writes is under ${dir}, removed on exit.`,
  bannerCeleryReal:
    'Celery:  a real Celery worker (zeus-worker-1@demo) consumes celery:notification_sending.',
  bannerCelerySimulated:
    'Celery:  SIMULATED: python3-celery is not installed, so zeus messages and failures were written in Celery’s wire format and no Celery worker runs.',
  bannerHint: 'Type /queue status (or just: status), then a button number to press it. help, quit.',
  consoleHelp: [
    'Console:',
    '  status | dlq pushizo/dispatch-ios | workers zeus | help   the words after /queue ("/queue" optional)',
    '  pause pushizo/dispatch-ios | pending | approve <id> | audit | audit verify',
    '  purge pushizo/dispatch-ios failed | undo <id> | scale pushizo/dispatch 3 | scale zeus/pool 4',
    '  alerts | trend pushizo/dispatch-ios | timeline | why pushizo | why zeus/celery:alarm_processing',
    '  1, 2, …        press that button of the last message',
    '  :user U0BOB    act as another Slack user (approvals need two people;',
    '                 U0ALICE is the operator, U0BOB and U0CAROL are the admins)',
    '  quit           leave (also Ctrl-D)',
  ].join('\n'),
  prompt: (user: string) => `${user} /queue> `,
  noButtons: 'The last message has no buttons. Type a command first, e.g. status.',
  noSuchButton: (index: number, max: number) => `There is no button ${index}; the last message has 1–${max}.`,
  unknownButton: (label: string) => `The button "${label}" does nothing in the console.`,
  userSwitched: (user: string) => `You are now ${user}.`,
  badUser: (text: string) => `"${text}" is not a Slack user id (U… or W…), e.g. :user U0BOB.`,
  stopping: 'Stopping the demo…',
  monitoring: 'Back-filling monitor samples and starting the monitor…',
  fileWritten: (path: string) => `Chart written to ${path}`,
};
