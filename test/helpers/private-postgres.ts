// A PostgreSQL server of a test's own, to stop and start mid-load without touching the machine's
// shared server: initdb and pg_ctl from the installed PostgreSQL, a temp folder, a free port, its
// socket in that folder. initdb refuses to run as root: as root, the server runs as `postgres`.
import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IN_CI } from './services.js'
import { freePort } from './private-redis.js'

/** The folder holding initdb and pg_ctl: on the PATH, or Debian's /usr/lib/postgresql/<version>/bin. */
function postgresBin(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir
  const debian = '/usr/lib/postgresql'
  if (!existsSync(debian)) return undefined
  const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a))
  return versions.map((v) => join(debian, v, 'bin')).find((dir) => existsSync(join(dir, 'initdb')))
}

const isRoot = process.getuid?.() === 0
const runAsync = promisify(execFile)

/** The uid and gid of the `postgres` user, read from /etc/passwd. */
function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    return undefined
  }
}

/** Whether a private PostgreSQL can be started here; outside CI its absence skips, with a word. */
export function canRunPrivatePostgres(): boolean {
  const missing =
    postgresBin() === undefined
      ? 'initdb and pg_ctl are missing'
      : isRoot && postgresUser() === undefined
        ? 'running as root, and there is no postgres user to run initdb as'
        : undefined
  if (missing === undefined) return true
  if (IN_CI) throw new Error(`${missing}, and CI=true requires a private PostgreSQL (apt-get install postgresql)`)
  console.warn(`[skip] ${missing}: the PostgreSQL outage tests are skipped (apt-get install postgresql).`)
  return false
}

export class PrivatePostgres {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  private get data(): string {
    return join(this.dir, 'data')
  }

  /** Runs a PostgreSQL program, as the postgres user when we are root; the test's load goes on meanwhile. */
  private async run(program: string, args: string[]): Promise<void> {
    const command = join(this.bin, program)
    if (isRoot) await runAsync('runuser', ['-u', 'postgres', '--', command, ...args])
    else await runAsync(command, args)
  }

  /** A new cluster in a temp folder (trust authentication, superuser postgres), not started yet. */
  static async create(): Promise<PrivatePostgres> {
    const bin = postgresBin()
    if (bin === undefined) throw new Error('initdb is missing')
    const dir = mkdtempSync(join(tmpdir(), 'threadline-pg-'))
    const user = isRoot ? postgresUser() : undefined
    if (user !== undefined) chownSync(dir, user.uid, user.gid)
    const server = new PrivatePostgres(bin, dir, await freePort())
    await server.run('initdb', ['-D', server.data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C'])
    return server
  }

  /** Starts it (again) on its port, and waits until it accepts connections. */
  start(): Promise<void> {
    return this.run('pg_ctl', [
      '-D',
      this.data,
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`,
      'start',
    ])
  }

  /** Stops it the way an operator restarting it would: connections cut, a clean shutdown. */
  stop(): Promise<void> {
    return this.run('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', 'stop'])
  }

  /** Stops it if it runs, and removes everything. */
  async destroy(): Promise<void> {
    try {
      await this.run('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop'])
    } catch {
      // Not running.
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}
