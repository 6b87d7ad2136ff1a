// The documentation's examples, run against a live server, so that README.md and docs/*.md cannot
// drift from what the service answers. The rules (docs/development.md repeats them for writers):
//
// - An example is a ```sh block whose every command is a `curl` command or sets a shell variable
//   from a command (`TOKEN=$(npx threadline tokens create --user 1)`). A ```sh block mixing curl
//   with other commands, or a curl line in a block of another shell-like language (```bash,
//   ```shell, unlabelled), fails: split it, or label it sh.
// - Each document runs in one bash session, its examples in order: a variable set by one is there
//   for the next; documents share no variables. All run on one server and database (the app of
//   src/app.ts on a fresh SQLite file with the demo data), README.md first, then docs/*.md by name:
//   an example may count on the demo data and on what its own document did before it.
// - http://127.0.0.1:3000 in a command is replaced by the server's address, and the server's
//   address in an answer by http://127.0.0.1:3000 before it is compared.
// - Every command exits 0, and every curl it calls exits 0 with a 2xx answer, unless the command's
//   line ends with a comment starting with a status (`# 404 NOT_FOUND`): then that status.
// - A ```json block right after an example (only blank lines between) is the body of the example's
//   last curl answer (after its headers, with -i). Both are parsed and must be equal, except that
//   "..." matches any value, a "...": "..." member any other members of its object, and a last
//   "..." item any further items of its array.
// - A curl with -N (a stream) runs in the background; the test goes on once the server answered
//   its request (an event stream's head is written once the subscription is held), and at the next
//   ```text block of the document the stream must have printed that block's lines, in order; then
//   it is stopped, and the test goes on once the server has let its subscription go. A stream
//   still open at the document's end fails.
// - A ```js block is a program, run by node as an ES module from the repository's root (so it
//   imports what `npm install` brought), in a terminal of its own: no variable of the document's
//   session, no TOKEN. It runs as a stream does: the test goes on once it has ended (exit status
//   0) or the server holds one more subscription; at the next ```text block it must have printed
//   that block's lines (stdout and stderr); then it is stopped if it still runs.
// - A variable set from `npx threadline …` (a token) is set once per run: a later document with the
//   very same command is given the value it gave, without the seconds npm's npx takes each time.
// - A block that cannot run is marked `<!-- not an example: why -->` on the line before its fence,
//   and is listed below as a skipped test with that reason.
//
// Beside the examples (their links: links.test.ts): docs/configuration.md names exactly the
// variables loadConfig reads, docs/development.md explains every script of package.json, and no
// document points outside the repository.
import { execFileSync, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/create-database.js'
import { prepareDatabase } from '../../src/server.js'
import { BashSession, type CurlCall, waitFor } from '../helpers/bash-session.js'
import { bodyOf, commandsOf, type DocumentPlan, jsonDifferences, planDocument, type Step } from '../helpers/doc-examples.js'
import { freshSqliteFile, type TestDatabase } from '../helpers/test-store.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8')
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]
/** The server's address as the documents write it. */
const DOCUMENTED_ADDRESS = '127.0.0.1:3000'

let store: TestDatabase
let app: FastifyInstance
/** host:port of the server under test. */
let address: string

beforeAll(async () => {
  try {
    execFileSync('curl', ['--version'])
  } catch {
    throw new Error("the documentation's examples need curl on the PATH (apt-get install -y curl)")
  }
  store = freshSqliteFile()
  // The shipped settings, but passwords hashed at a test's cost (the examples set and check some).
  const config = loadConfig({ DATABASE_URL: store.url, LOG_LEVEL: 'silent', PASSWORD_SCRYPT_N: '1024' })
  const database = openDatabase(config.database)
  await prepareDatabase(database, config)
  app = await buildApp(config, { database })
  address = new URL(await app.listen({ host: '127.0.0.1', port: 0 })).host
})

afterAll(async () => {
  await app.close()
  await store.drop()
})

const plans = DOCUMENTS.map((file) => planDocument(file, read(file)))

/** Values set from `npx threadline …` by an earlier document, by the command that set them. */
const setByCommandLine = new Map<string, string>()

/** Runs one command; one that sets a variable from `npx threadline …` only once per run (see the rules). */
async function runCommand(session: BashSession, code: string) {
  const name = /^([A-Za-z_][A-Za-z0-9_]*)=\$\(npx threadline /.exec(code)?.[1]
  if (name === undefined) return session.run(code)
  const value = setByCommandLine.get(code)
  if (value !== undefined) return session.run(`${name}='${value.replaceAll("'", "'\\''")}'`)
  const result = await session.run(code)
  if (result.exitCode === 0) setByCommandLine.set(code, await session.variable(name))
  return result
}

/** Something a document left running until its next ```text block: a curl -N, or a program. */
interface Stream {
  where: string
  /** What it printed so far, the server's address as the documents write it. */
  printed(): string
  /** Ends it (if it still runs); what departed from the document. */
  stop(): Promise<string[]>
  /** Subscriptions the server held before it started: it has let the stream's go once it is back there. */
  subscriptionsBefore: number
}

/** Starts a curl -N; resolves once the server answered it (an event stream's head follows its subscription). */
async function startCurlStream(session: BashSession, code: string, where: string, failures: string[]): Promise<Stream> {
  const subscriptionsBefore = app.subscriptionStats.subscriptions
  const command = await session.start(code)
  const answered = () => command.call()?.status !== undefined || command.call()?.exitCode !== undefined
  await waitFor(answered, 'the stream to be answered').catch(() => undefined)
  const status = command.call()?.status
  if (status === undefined || status < 200 || status >= 300)
    failures.push(`${where}: the stream did not subscribe: ${status === undefined ? 'no answer' : `answered ${status}`}: ${command.call()?.output ?? ''}`)
  return {
    where,
    subscriptionsBefore,
    printed: () => shown(command.call() ?? { status: undefined, output: '', exitCode: undefined }).replace(/\r\n/g, '\n'),
    stop: async () => {
      const status = (await command.stop())?.status
      return status === undefined || status < 200 || status >= 300 ? [`${where}: the stream answered ${status}`] : []
    },
  }
}

/**
 * How long a program may take to end or subscribe: node loading a client library (Apollo Client
 * takes seconds to import on a busy machine) is slower than a curl, so as long as a command may run.
 */
const PROGRAM_START_MS = 60_000

/** Starts a ```js program; resolves once it ended or the server holds one more subscription. */
async function startProgram(code: string, where: string, failures: string[]): Promise<Stream> {
  const subscriptionsBefore = app.subscriptionStats.subscriptions
  // A terminal of its own: the reader's environment, without the document's variables.
  const env = { ...process.env }
  delete env.TOKEN
  const child = spawn(process.execPath, ['--input-type=module', '-'], { cwd: ROOT, env })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)))
  child.stdin.end(code.replaceAll(DOCUMENTED_ADDRESS, address))
  let ended = false
  void exited.then(() => (ended = true))
  await waitFor(() => ended || app.subscriptionStats.subscriptions > subscriptionsBefore, 'the program to end or subscribe', PROGRAM_START_MS).catch(() =>
    failures.push(`${where}: the program neither ended nor subscribed: ${output.slice(0, 500)}`),
  )
  const printed = () => output.replaceAll(address, DOCUMENTED_ADDRESS)
  return {
    where,
    subscriptionsBefore,
    printed,
    stop: async () => {
      const endedByItself = ended
      if (!ended) child.kill('SIGTERM')
      const exitCode = await exited
      return endedByItself && exitCode !== 0 ? [`${where}: the program exited ${exitCode}: ${printed().slice(0, 500)}`] : []
    },
  }
}

/** Runs a document's examples in one bash session; returns what departed from the document. */
async function runDocument(plan: DocumentPlan): Promise<string[]> {
  const session = new BashSession(ROOT, { ...process.env, DATABASE_URL: store.url })
  const failures: string[] = []
  let stream: Stream | undefined
  try {
    for (const step of plan.steps) {
      if (step.kind === 'text') {
        if (stream !== undefined) failures.push(...(await endStream(stream, `${plan.file}:${step.line}`, step.text)))
        stream = undefined
        continue
      }
      if (step.kind === 'program') {
        const where = `${plan.file}:${step.line}`
        if (stream !== undefined) failures.push(`${where}: a second stream while ${stream.where}'s is open`)
        stream = await startProgram(step.code, where, failures)
        continue
      }
      let last: CurlCall | undefined
      for (const command of step.commands) {
        const where = `${plan.file}:${command.line}`
        const code = command.code.replaceAll(DOCUMENTED_ADDRESS, address)
        if (command.stream) {
          if (stream !== undefined) failures.push(`${where}: a second stream while ${stream.where}'s is open`)
          stream = await startCurlStream(session, code, where, failures)
          continue
        }
        const result = await runCommand(session, code)
        if (result.exitCode !== 0) failures.push(`${where}: exited ${result.exitCode}: ${result.stderr.trim()}`)
        if (/^curl\s/.test(command.code) && result.calls.length === 0) failures.push(`${where}: ran no curl`)
        for (const call of result.calls) {
          const failure = statusFailure(call, command.status)
          if (failure !== undefined) failures.push(`${where}: ${failure}`)
        }
        last = result.calls.at(-1) ?? last
      }
      if (step.answer !== undefined) failures.push(...answerFailures(`${plan.file}:${step.answer.line}`, step.answer.json, last))
    }
    if (stream !== undefined) {
      failures.push(`${stream.where}: the stream is still open at the end of the document (no \`\`\`text block after it)`)
      await stream.stop()
    }
  } finally {
    await session.close()
  }
  return failures
}

const shown = (call: CurlCall) => call.output.replaceAll(address, DOCUMENTED_ADDRESS)

function statusFailure(call: CurlCall, expected: number | '2xx'): string | undefined {
  if (call.exitCode !== 0) return `curl exited ${call.exitCode}: ${shown(call).slice(0, 300)}`
  if (call.status === undefined) return 'no answer'
  const met = expected === '2xx' ? call.status >= 200 && call.status < 300 : call.status === expected
  return met ? undefined : `answered ${call.status} where the document says ${expected}: ${bodyOf(shown(call)).slice(0, 300)}`
}

function answerFailures(where: string, json: string, call: CurlCall | undefined): string[] {
  if (call === undefined) return [`${where}: no answer before it to compare with`]
  let expected: unknown
  let actual: unknown
  try {
    expected = JSON.parse(json)
  } catch (error) {
    return [`${where}: the block is not JSON (${(error as Error).message})`]
  }
  try {
    actual = JSON.parse(bodyOf(shown(call)))
  } catch {
    return [`${where}: the answer is not JSON: ${bodyOf(shown(call)).slice(0, 300)}`]
  }
  return jsonDifferences(expected, actual).map((difference) => `${where}: ${difference}`)
}

async function endStream(stream: Stream, where: string, text: string): Promise<string[]> {
  const failures: string[] = []
  await waitFor(() => stream.printed().includes(text.trim()), `the stream to print ${where}`).catch(() =>
    failures.push(`${stream.where}: the stream did not print the lines of ${where}; it printed: ${stream.printed().slice(0, 500)}`),
  )
  failures.push(...(await stream.stop()))
  // The server lets the subscription go when it sees the connection close: until then, a count
  // taken for the next stream would still hold this one.
  await waitFor(() => app.subscriptionStats.subscriptions <= stream.subscriptionsBefore, `the server to let ${stream.where}'s subscription go`).catch(() =>
    failures.push(`${stream.where}: the server still holds its subscription after it ended`),
  )
  return failures
}

const examplesOf = (plan: DocumentPlan) => plan.steps.filter((step): step is Exclude<Step, { kind: 'text' }> => step.kind !== 'text')

describe('the rules the examples are read by', () => {
  it('splits commands as bash does: quotes, line continuations, $(…), comments', () => {
    const text = [
      "# a comment with a quote: user 1's posts",
      "curl -X POST http://127.0.0.1:3000/x -H 'A: #1' \\",
      '  -d \'{"a": "b\nc"}\'   # 201 Created',
      'T=$(curl -s http://127.0.0.1:3000/y |',
      "  node -pe 'x')",
    ].join('\n')
    expect(commandsOf(text, 10)).toEqual([
      { code: 'curl -X POST http://127.0.0.1:3000/x -H \'A: #1\' \\\n  -d \'{"a": "b\nc"}\'', comment: '# 201 Created', line: 11 },
      { code: "T=$(curl -s http://127.0.0.1:3000/y |\n  node -pe 'x')", comment: undefined, line: 14 },
    ])
  })

  it('reads "..." as any value, any further members of an object, any further items of an array', () => {
    const expected = { data: [{ id: 1, '...': '...' }, '...'], meta: { timestamp: '...' } }
    expect(jsonDifferences(expected, { data: [{ id: 1, name: 'a' }, { id: 2 }], meta: { timestamp: 'now' } })).toEqual([])
    expect(jsonDifferences(expected, { data: [{ id: 2 }], meta: { timestamp: 'now', extra: 1 } })).toEqual([
      '$.data[0].id: expected 1, got 2',
      '$.meta.extra: not in the document',
    ])
    expect(jsonDifferences({ a: [1] }, { a: [1, 2] })).toEqual(['$.a: expected 1 items, got 2'])
  })

  it('refuses a curl it would not run, and lists a marked block as skipped with its reason', () => {
    const plan = planDocument(
      'doc.md',
      [
        '```bash',
        'curl http://127.0.0.1:3000/',
        '```',
        '```sh',
        'npm start',
        'curl http://127.0.0.1:3000/',
        '```',
        '<!-- not an example: needs nginx -->',
        '```sh',
        'curl http://127.0.0.1:8080/',
        '```',
      ].join('\n'),
    )
    expect(plan.errors).toEqual(['doc.md:1: a curl example in a ```bash block: label it sh', 'doc.md:4: curl mixed with other commands (npm): split the block'])
    expect(plan.skipped).toEqual([{ line: 9, reason: 'needs nginx' }])
    expect(plan.steps).toEqual([])
  })

  it('fails an example whose status or answer is not the one its document shows', async () => {
    const plan = planDocument(
      'doc.md',
      [
        '```sh',
        'curl http://127.0.0.1:3000/api/v1/users/abc',
        'curl -i http://127.0.0.1:3000/api/v1/users/1   # 404',
        '```',
        '',
        '```json',
        '{"data": {"id": 2, "...": "..."}, "meta": "..."}',
        '```',
      ].join('\n'),
    )
    expect(await runDocument(plan)).toEqual([
      expect.stringMatching(/^doc\.md:2: answered 404 where the document says 2xx/),
      expect.stringMatching(/^doc\.md:3: answered 200 where the document says 404/),
      'doc.md:6: $.data.id: expected 2, got 1',
    ])
  })
})

describe('the programs of the documents', () => {
  it("runs a ```js block with node: it must print the next ```text block's lines, and exit 0 if it ends", async () => {
    const plan = planDocument(
      'doc.md',
      ['```js', "console.log(process.env.TOKEN ?? 'no token')", '```', '```text', 'no token', '```', '```js', 'process.exit(3)', '```', '```text', '```'].join(
        '\n',
      ),
    )
    expect(plan.steps.map((step) => step.kind)).toEqual(['program', 'text', 'program', 'text'])
    expect(await runDocument(plan)).toEqual(['doc.md:7: the program exited 3: '])
  })
})

describe("the documentation's examples", () => {
  it('are all examples the test can run, or say why not', () => {
    expect(plans.flatMap((plan) => plan.errors)).toEqual([])
    expect(plans.reduce((count, plan) => count + examplesOf(plan).length, 0)).toBeGreaterThan(0)
  })

  for (const plan of plans) {
    for (const skipped of plan.skipped) it.skip(`${plan.file}:${skipped.line} is not run: ${skipped.reason}`, () => undefined)
    const examples = examplesOf(plan)
    if (examples.length === 0) continue
    const commands = examples.reduce((count, example) => count + (example.kind === 'program' ? 1 : example.commands.length), 0)
    it(`${plan.file}: its ${examples.length} examples (${commands} commands) answer as the document shows`, { timeout: 300_000 }, async () => {
      expect(await runDocument(plan)).toEqual([])
    })
  }
})

describe('the documents', () => {
  it('speak only of this repository: no issue numbers, design sections or files outside it', () => {
    const outside = [/\.\.\/shared/, /DESIGN\.md/, /\bspec\//, /§/, /(^|[\s(])#\d/, /\bissue \d/i]
    const found = DOCUMENTS.flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((text, i) => (outside.some((pattern) => pattern.test(text)) ? [`${file}:${i + 1}: ${text.trim()}`] : [])),
    )
    expect(found).toEqual([])
  })

  it('docs/configuration.md names every variable loadConfig reads, and no other', () => {
    const readByConfig = new Set<string>()
    const env = new Proxy<Record<string, string | undefined>>(
      {},
      {
        get: (_target, name) => {
          if (typeof name === 'string') readByConfig.add(name)
          return undefined
        },
      },
    )
    loadConfig(env, {}, false)
    const documented = read('docs/configuration.md')
      .split('\n')
      .flatMap((line) => [...(/^\|([^|]*)\|/.exec(line)?.[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]))
    expect([...new Set(documented)].sort()).toEqual([...readByConfig].sort())
  })

  it('docs/development.md explains every script of package.json', () => {
    const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts)
    const command = (script: string) => (script === 'start' || script === 'test' ? `npm ${script}` : `npm run ${script}`)
    const rows = read('docs/development.md')
      .split('\n')
      .map((line) => /^\| `([^`]+)` \|/.exec(line)?.[1])
    expect(scripts.filter((script) => !rows.includes(command(script)))).toEqual([])
  })
})
