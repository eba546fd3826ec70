import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configSchema } from '../../src/config/schema.js';
import { freePort, loopbackRedisArgs, spawnRedis } from '../../src/lib/redis-server.js';

/** One system's config, read by the schema as a config file's would be (defaults filled in). */
export const parseSystem = <T>(system: Record<string, unknown>): T =>
  configSchema.parse({ systems: [system] }).systems[0] as T;

/** A redis-server (or sentinel) process started with arbitrary arguments, stopped by the test. */
export interface RedisProcess {
  port: number;
  stop(): Promise<void>;
}

export async function startRedisProcess(
  args: string[],
  options: { port?: number; ready?: RegExp; dir?: string } = {},
): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'qo-redis-shape-'));
  const child = await spawnRedis([...args, '--dir', dir], options.ready ? { ready: options.ready } : {});
  return {
    port,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        await exited;
      }
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A private CA and a server certificate for 127.0.0.1 / localhost, made with openssl. */
export interface TestCa {
  dir: string;
  ca: string;
  cert: string;
  key: string;
  /** A client certificate and key signed by the same CA, for a Redis that asks for one. */
  clientCert: string;
  clientKey: string;
  cleanup(): void;
}

export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'qo-tls-'));
  const file = (name: string) => join(dir, name);
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=queue-ops test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
  ]);
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  /** `<name>.key` and `<name>.crt` for `subject`, signed by the CA above. */
  const signed = (name: string, subject: string, extensions: string[] = []) => {
    run([
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
    ]);
    run([
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      ...extensions,
      '-out',
      file(`${name}.crt`),
    ]);
  };
  signed('server', '/CN=localhost', ['-extfile', file('san.ext')]);
  signed('client', '/CN=queue-ops');
  return {
    dir,
    ca: file('ca.crt'),
    cert: file('server.crt'),
    key: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** redis-server speaking only TLS on a free port, with the CA's server certificate. */
export async function startTlsRedis(
  ca: TestCa,
  options: { clientCertificates?: boolean } = {},
): Promise<RedisProcess> {
  const port = await freePort();
  return await startRedisProcess(
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      ...loopbackRedisArgs(),
      '--tls-cert-file',
      ca.cert,
      '--tls-key-file',
      ca.key,
      '--tls-ca-cert-file',
      ca.ca,
      '--tls-auth-clients',
      options.clientCertificates ? 'yes' : 'no',
    ],
    { port },
  );
}

/** A master, one replica and one sentinel watching them as `name`. */
export interface SentinelGroup {
  name: string;
  master: RedisProcess;
  replica: RedisProcess;
  sentinel: RedisProcess;
  stop(): Promise<void>;
}

export async function startSentinelGroup(name = 'mymaster'): Promise<SentinelGroup> {
  const base = loopbackRedisArgs();
  const masterPort = await freePort();
  const master = await startRedisProcess(['--port', String(masterPort), ...base], { port: masterPort });
  const replicaPort = await freePort();
  const replica = await startRedisProcess(
    ['--port', String(replicaPort), ...base, '--replicaof', '127.0.0.1', String(masterPort)],
    { port: replicaPort },
  );
  const sentinelPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'qo-sentinel-'));
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'),
  );
  const sentinel = await startRedisProcess([conf, '--sentinel'], {
    port: sentinelPort,
    dir,
    ready: /Sentinel ID is|monitor master/,
  });
  return {
    name,
    master,
    replica,
    sentinel,
    async stop() {
      await sentinel.stop();
      await replica.stop();
      await master.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Three masters started with `--cluster-enabled yes` and joined by `redis-cli --cluster create`. */
export interface RedisClusterProcesses {
  ports: number[];
  stop(): Promise<void>;
}

export async function startRedisCluster(): Promise<RedisClusterProcesses> {
  const nodes: RedisProcess[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    nodes.push(
      await startRedisProcess(
        [
          '--port',
          String(port),
          ...loopbackRedisArgs(),
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '2000',
        ],
        { port },
      ),
    );
  }
  const ports = nodes.map((n) => n.port);
  execFileSync(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ],
    { stdio: 'pipe' },
  );
  // Every node must agree the cluster is up before clients are pointed at it.
  const until = Date.now() + 20_000;
  for (const port of ports) {
    for (;;) {
      const info = execFileSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' });
      if (info.includes('cluster_state:ok')) break;
      if (Date.now() > until) throw new Error(`cluster did not come up:\n${info}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    ports,
    async stop() {
      for (const node of nodes) await node.stop();
    },
  };
}
