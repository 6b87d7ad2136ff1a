// One bash process that runs a document's examples one command at a time, as a reader types them
// into one terminal: variables set by one command are there for the next. Each curl the commands
// call runs the real curl binary through a shell function that adds -sS and keeps, per call, the
// response headers (-D), what curl printed and its exit code, so the test can check the status of
// every answer whatever the command does with the output (a pipe, a $(…), -o /dev/null).
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, type Writable } from 'node:stream'

/** One call of curl: the status of its (last) answer, what it printed, its exit code (undefined while it runs). */
export interface CurlCall {
  status: number | undefined
  output: string
  exitCode: number | undefined
}

export interface CommandResult {
  exitCode: number
  calls: CurlCall[]
  /** What the command wrote to stderr. */
  stderr: string
}

/** A command left running in the background (a stream), until stop(). */
export interface BackgroundCommand {
  call(): CurlCall | undefined
  /** Ends its curl and returns the call as it ended. */
  stop(): Promise<CurlCall | undefined>
}

// $__records/<command id>.<time in µs>.<pid>: one folder per curl call, in the order they started.
const PRELUDE = `
set -o pipefail
__command=0
curl() {
  local record="$__records/$__command.\${EPOCHREALTIME/./}.$BASHPID"
  mkdir "$record" || return 99
  command curl -sS -D "$record/head" "$@" > "$record/out" &
  echo $! > "$record/pid"
  wait $!
  local status=$?
  echo "$status" > "$record/exit"
  cat "$record/out"
  return "$status"
}
`

const COMMAND_TIMEOUT_MS = 60_000

export class BashSession {
  private readonly bash: ChildProcess
  private readonly stdin: Writable
  private readonly records = mkdtempSync(join(tmpdir(), 'threadline-doc-examples-'))
  private readonly done = new Map<number, (exitCode: number) => void>()
  private stderr = ''
  private next = 0

  constructor(cwd: string, env: Record<string, string | undefined>) {
    // fd 3: where each command reports that it finished, apart from anything it prints.
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env: { ...env, __records: this.records }, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] })
    const [stdin, stdout, stderr, reports] = this.bash.stdio
    if (!stdin || !stdout || !stderr || !(reports instanceof Readable)) throw new Error('bash started without its pipes')
    this.stdin = stdin
    let pending = ''
    reports.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        const [id, exitCode] = pending.slice(0, end).split(' ').map(Number)
        pending = pending.slice(end + 1)
        this.done.get(id ?? -1)?.(exitCode ?? -1)
      }
    })
    stdout.resume()
    stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.stdin.write(PRELUDE)
  }

  /** Runs one command to its end. */
  async run(code: string): Promise<CommandResult> {
    const id = ++this.next
    const stderrBefore = this.stderr.length
    const finished = new Promise<number>((resolve, reject) => {
      this.done.set(id, resolve)
      setTimeout(() => reject(new Error(`did not finish within ${COMMAND_TIMEOUT_MS / 1000} s: ${code}`)), COMMAND_TIMEOUT_MS).unref()
    })
    this.stdin.write(`__command=${id}\n${code}\nprintf '%s %s\\n' ${id} $? >&3\n`)
    const exitCode = await finished
    return { exitCode, calls: this.callsOf(id), stderr: this.stderr.slice(stderrBefore) }
  }

  /** The value of a shell variable of the session. */
  async variable(name: string): Promise<string> {
    const file = join(this.records, `${name}.value`)
    await this.run(`printf '%s' "$${name}" > '${file}'`)
    return readFileSync(file, 'utf8')
  }

  /** Starts one command in the background and returns once its curl runs. */
  async start(code: string): Promise<BackgroundCommand> {
    const id = ++this.next
    this.stdin.write(`__command=${id}\n${code} &\n`)
    const folder = () => readdirSync(this.records).find((name) => name.startsWith(`${id}.`))
    await waitFor(() => {
      const name = folder()
      return name !== undefined && pidOf(join(this.records, name)) !== undefined
    }, `the background command to start: ${code}`)
    const record = join(this.records, folder() ?? '')
    return {
      call: () => this.callsOf(id)[0],
      stop: async () => {
        this.end(record)
        await waitFor(() => existsSync(join(record, 'exit')), `the background command to end: ${code}`)
        return this.callsOf(id)[0]
      },
    }
  }

  /** Ends bash and any curl still running in the background, and removes the calls' records. */
  async close(): Promise<void> {
    for (const name of readdirSync(this.records)) this.end(join(this.records, name))
    const exited = new Promise((resolve) => this.bash.once('exit', resolve))
    this.stdin.end()
    await exited
    rmSync(this.records, { recursive: true, force: true })
  }

  /** Ends the curl of a call that still runs. SIGTERM, not Ctrl-C's SIGINT: bash starts a background command with SIGINT ignored. */
  private end(record: string): void {
    const pid = pidOf(record)
    if (pid === undefined || existsSync(join(record, 'exit'))) return
    try {
      process.kill(pid, 'SIGTERM')
    } catch (error) {
      // It ended meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
    }
  }

  private callsOf(id: number): CurlCall[] {
    return readdirSync(this.records)
      .filter((name) => name.startsWith(`${id}.`))
      .sort()
      .map((name) => {
        const read = (file: string) => (existsSync(join(this.records, name, file)) ? readFileSync(join(this.records, name, file), 'utf8') : '')
        const statuses = [...read('head').matchAll(/^HTTP\/\S+ (\d{3})/gm)].map((match) => Number(match[1]))
        const exit = read('exit').trim()
        return { status: statuses.at(-1), output: read('out'), exitCode: exit === '' ? undefined : Number(exit) }
      })
  }
}

/** The pid of a call's curl once the shell has written it whole (never 0, which would signal our own group). */
function pidOf(record: string): number | undefined {
  const file = join(record, 'pid')
  const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  return /^[1-9]\d*\n$/.test(text) ? Number(text) : undefined
}

/** Polls `condition` every 10 ms; fails after `ms`, naming what it waited for. */
export async function waitFor(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
