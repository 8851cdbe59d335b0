// A real PostgreSQL for the WorkspaceProfiles tests, like tests/src/servers/postgres.rs: a cluster
// of its own (initdb into a temp dir, Debian's binaries from /usr/lib/postgresql/<highest>/bin or
// PATH), started with pg_ctl on a free 127.0.0.1 port (fsync off), stopped after (also at exit).
// initdb refuses root, so as root every server command runs as the `postgres` user (or `nobody`)
// through setpriv, which owns the temp dir. Local (socket) sessions are trusted: the tests' admin
// connection is the superuser `postgres` over the socket. TCP sessions need a password
// (scram-sha-256), so the read-only role `svc` the tests give WorkspaceProfiles really logs in
// with its password. A missing PostgreSQL skips the suites, unless CAPACITY_REQUIRE_SERVERS=1.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, required } from './servers.mjs';

const run = promisify(execFile);

/** The directory of initdb and pg_ctl: the highest /usr/lib/postgresql/<version>/bin, else PATH's. */
export function postgresBin() {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const bin = join(base, v, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const initdb = found.status === 0 ? found.stdout.trim() : '';
  return initdb && existsSync(join(initdb, '..', 'pg_ctl')) ? join(initdb, '..') : undefined;
}

/** `describe`'s skip option for the suites that need PostgreSQL (false when installed, or when
 * CAPACITY_REQUIRE_SERVERS=1: then `requirePostgres` fails the suite's hook). */
export function skipUnlessPostgres() {
  return postgresBin() === undefined && !required && 'PostgreSQL (initdb, pg_ctl) not installed (CAPACITY_REQUIRE_SERVERS=1 makes this a failure)';
}

export function requirePostgres() {
  if (postgresBin() === undefined) throw new Error('PostgreSQL (initdb, pg_ctl) not installed, and CAPACITY_REQUIRE_SERVERS=1');
}

const root = process.getuid?.() === 0;
const hasUser = (name) => spawnSync('id', ['-u', name]).status === 0;
// Who runs the server when we are root, and setpriv's arguments for it.
const owner = !root ? undefined : hasUser('postgres')
  ? { user: 'postgres', args: ['--reuid=postgres', '--regid=postgres', '--init-groups'] }
  : { user: 'nobody', args: ['--reuid=nobody', '--regid=nogroup', '--clear-groups'] };

/** Runs a PostgreSQL program (as the owner when root); rejects with its output on failure. */
async function pgCommand(program, args) {
  const path = join(postgresBin(), program);
  const [file, argv] = owner ? ['setpriv', [...owner.args, '--', path, ...args]] : [path, args];
  try {
    return await run(file, argv, { timeout: 60_000 });
  } catch (e) {
    throw new Error(`${program} ${args.join(' ')} failed: ${e.stderr || e.message}`);
  }
}

const running = new Set();
process.on('exit', () => {
  for (const server of running) {
    const path = join(postgresBin(), 'pg_ctl');
    const args = ['-D', server.data, '-m', 'immediate', '-w', 'stop'];
    if (owner) spawnSync('setpriv', [...owner.args, '--', path, ...args], { stdio: 'ignore' });
    else spawnSync(path, args, { stdio: 'ignore' });
  }
});

/** One PostgreSQL cluster, its superuser `postgres` (trusted over the socket). */
export class PostgresServer {
  constructor(dir, port) {
    this.dir = dir;
    this.data = join(dir, 'data');
    this.port = port;
  }

  static async start() {
    const dir = mkdtempSync(join(tmpdir(), 'capacity-postgres-'));
    if (owner) await run('chown', ['-R', `${owner.user}:`, dir]);
    await pgCommand('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256',
      '--no-sync', '-E', 'UTF8', '--no-instructions']);
    const server = new PostgresServer(dir, await freePort());
    await server.restart();
    return server;
  }

  /** Starts it (again, on the same port and with the same data). */
  async restart() {
    await pgCommand('pg_ctl', ['-D', this.data, '-l', join(this.dir, 'postgres.log'), '-w', '-t', '30', '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
    running.add(this);
  }

  /** Starts it unless it runs (after a test that stopped it failed half-way). */
  async ensureRunning() {
    if (!running.has(this)) await this.restart();
  }

  /** Stops it (fast: sessions are ended, as when a database is shut down for maintenance). */
  async stop() {
    if (!running.has(this)) return;
    running.delete(this);
    await pgCommand('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', '-t', '30', 'stop']);
  }

  /** Stops it and removes its files. */
  async destroy() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs SQL as the superuser over the socket (one session per call); the rows. */
  async sql(text, params = []) {
    const client = new pg.Client({ host: this.dir, port: this.port, user: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      return (await client.query(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** A URL for `user` over TCP. */
  url(user, password) {
    return `postgresql://${user}:${encodeURIComponent(password)}@127.0.0.1:${this.port}/postgres`;
  }

  /** How many sequential scans the server has counted on `table` (each profiles load is one):
   * a session's statistics arrive as it ends, so this waits (up to 5 s) until the count reaches
   * `expected`, then a little longer for any scan beyond it. */
  async scans(table, expected) {
    const count = async () => (await this.sql('SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE relname = $1', [table]))[0]?.n;
    for (let waited = 0; waited < 5000 && ((await count()) ?? 0) < expected; waited += 50) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 250));
    return count();
  }
}
