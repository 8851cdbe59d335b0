// Real servers for the reader's tests: redis-server and moto_server (AWS SSM), started on free
// 127.0.0.1 ports and stopped after (also when a test fails, and at exit). A missing binary skips
// the suites that need it, unless CAPACITY_REQUIRE_SERVERS=1 (CI): then it fails them.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The state document the sentinel publishes, decided at `T0` unless `over` says otherwise. */
export const T0 = 1792506600; // 2026-10-20T14:30:00Z
export const iso = (unix) => new Date(unix * 1000).toISOString().replace('.000Z', 'Z');
export function documentText(over = {}) {
  return JSON.stringify({
    state: 'constrained', factors: { bulk: 0.5, heavy: 0.7, write: 1, read: 1 }, decided_at: iso(T0),
    policy: { name: 'capacity-policy', version: '1.0.0', digest: 'ab'.repeat(32) }, pinned: false,
    pin_expires_at: null, cause: 'escalate', sequence: 42, ...over,
  });
}

/** A clock (unix seconds) at `T0 + offset`. */
export const clockAt = (offset = 0) => () => T0 + offset;

/** A logger that keeps every line, by level. */
export function capturingLogger() {
  const lines = [];
  const at = (level) => (message) => lines.push({ level, message });
  return { lines, warn: at('warn'), error: at('error'), info: at('info'), levels: () => lines.map((l) => l.level) };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CAPACITY_REQUIRE_SERVERS=1 (CI): a missing server is a failure, not a skip. */
export const required = process.env.CAPACITY_REQUIRE_SERVERS === '1';
const installed = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

/** `describe`'s skip option: why the suite is skipped, or false (when the binaries are installed,
 * or when CAPACITY_REQUIRE_SERVERS=1, and then `requireServers` fails the suite's hook). */
export function skipUnless(...bins) {
  const missing = bins.filter((b) => !installed(b));
  return missing.length > 0 && !required && `${missing.join(' and ')} not installed (CAPACITY_REQUIRE_SERVERS=1 makes this a failure)`;
}

/** A test that the binaries are installed: skipped (with the reason) when they are not and
 * CAPACITY_REQUIRE_SERVERS is unset, failed when it is 1. */
export function serversTest(test, ...bins) {
  test(`${bins.join(' and ')} installed`, { skip: skipUnless(...bins) }, () => requireServers(...bins));
}

/** Throws when a binary is missing (a suite's `before` hook: its tests then fail). */
export function requireServers(...bins) {
  const missing = bins.filter((b) => !installed(b));
  if (missing.length > 0) throw new Error(`${missing.join(' and ')} not installed, and CAPACITY_REQUIRE_SERVERS=1`);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().on('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, proc, what) {
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${what} exited (${proc.exitCode ?? proc.signalCode})`);
    const ok = await new Promise((resolve) => {
      const c = connect(port, '127.0.0.1', () => { c.end(); resolve(true); }).on('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`${what}: nothing listens on ${port}`);
}

const running = new Set();
process.on('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

async function start(bin, args, port) {
  const proc = spawn(bin, args, { stdio: 'ignore' });
  running.add(proc);
  proc.on('exit', () => running.delete(proc));
  try {
    await waitForPort(port, proc, bin);
  } catch (e) {
    await stop(proc);
    throw e;
  }
  return proc;
}

async function stop(proc) {
  if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGKILL');
  await exited;
}

/** A redis-server of its own (no persistence), and an admin client to it. */
export class RedisServer {
  #proc;
  #admin;

  constructor(port, args) {
    this.port = port;
    this.args = args;
    this.dir = mkdtempSync(join(tmpdir(), 'capacity-redis-'));
  }

  /** Starts a server on a free port (extra arguments, e.g. ['--requirepass', 'x']). */
  static async start(args = []) {
    const server = new RedisServer(await freePort(), args);
    await server.restart();
    return server;
  }

  url(auth = this.password() === undefined ? '' : `:${this.password()}@`) {
    return `redis://${auth}127.0.0.1:${this.port}/0`;
  }

  password() {
    const i = this.args.indexOf('--requirepass');
    return i < 0 ? undefined : this.args[i + 1];
  }

  /** Starts it (again, on the same port, empty). */
  async restart() {
    await this.stop();
    this.#proc = await start('redis-server', [
      '--bind', '127.0.0.1', '--port', String(this.port), '--save', '', '--appendonly', 'no', '--dir', this.dir, ...this.args,
    ], this.port);
  }

  /** Kills it (SIGKILL: the reader's connection drops as when a cache node dies). */
  async stop() {
    const admin = this.#admin;
    this.#admin = undefined;
    admin?.destroy();
    await stop(this.#proc);
  }

  /** A node-redis client for the test itself (not the reader's). */
  async admin() {
    if (this.#admin === undefined) {
      const { createClient } = await import('redis');
      const client = createClient({ url: this.url(), socket: { reconnectStrategy: false } });
      client.on('error', () => {});
      await client.connect();
      this.#admin = client;
    }
    return this.#admin;
  }

  /** `INFO <section>` as {field: value}. */
  async info(section) {
    const text = await (await this.admin()).sendCommand(['INFO', section]);
    return Object.fromEntries(String(text).split('\r\n').filter((l) => l.includes(':')).map((l) => {
      const i = l.indexOf(':');
      return [l.slice(0, i), l.slice(i + 1)];
    }));
  }

  /** How many value reads (GETRANGE, as the reader reads, and GET) the server has run since the
   * last CONFIG RESETSTAT. */
  async reads() {
    const stats = await this.info('commandstats');
    const calls = (stat) => (stat === undefined ? 0 : Number(/calls=(\d+)/.exec(stat)[1]));
    return calls(stats.cmdstat_get) + calls(stats.cmdstat_getrange);
  }

  /** Connections the server has accepted, the test's own admin connection included. */
  async connectionsReceived() {
    return Number((await this.info('stats')).total_connections_received);
  }
}

/** A moto_server (AWS SSM in memory), with AWS_ENDPOINT_URL_SSM and test credentials set in
 * process.env for the clients created after it. */
export class MotoServer {
  #proc;
  #saved;

  static async start() {
    const server = new MotoServer();
    server.port = await freePort();
    server.#proc = await start('moto_server', ['-H', '127.0.0.1', '-p', String(server.port)], server.port);
    server.#saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${server.port}`, AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing', AWS_REGION: 'eu-west-1',
    });
    return server;
  }

  /** Publishes `value` as the String parameter `name`, as the sentinel does. */
  async put(name, value) {
    const { SSMClient, PutParameterCommand } = await import('@aws-sdk/client-ssm');
    const client = new SSMClient({});
    try {
      await client.send(new PutParameterCommand({ Name: name, Value: value, Type: 'String', Overwrite: true }));
    } finally {
      client.destroy();
    }
  }

  async stop() {
    await stop(this.#proc);
    if (this.#saved !== undefined) process.env = this.#saved;
  }
}
