#!/usr/bin/env node
// The `threadline` command: serve, migrate, seed, import, reset, export, users, tokens. `--help` on each.
import { Command, InvalidArgumentError, Option } from 'commander'
import type { SeedCommandOptions } from './cli/commands.js'
import { EXPORT_FORMATS, type ExportOptions } from './cli/export-format.js'
import { MAX_PIPE_MB, SPOOL_OPTION } from './cli/spool-options.js'
import { type Config, ConfigError, type ConfigFlags, loadConfig } from './config.js'
import { SCOPES, type Scope } from './core/caller.js'
import { parseDuration } from './core/duration.js'
import { AppError } from './errors.js'
import { MAX_BATCH_SIZE } from './seed-section.js'
import { SEED_FLAGS } from './seed/seed-flags.js'
import { withServerV8Settings } from './v8-settings.js'
import { PACKAGE_VERSION } from './package-info.js'

// Each command's code is loaded when it runs: --help, and the process that waits while an import
// runs in a bounded heap (cli/bounded-heap.ts), load neither the server nor the database (45 MB
// of RSS against 112 MB).
const commands = () => import('./cli/commands.js')

function count(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('expected a whole number')
  return Number(value)
}

function batchSize(value: string): number {
  const n = count(value)
  if (n === 0 || n > MAX_BATCH_SIZE) throw new InvalidArgumentError(`expected a number from 1 to ${MAX_BATCH_SIZE}`)
  return n
}

function duration(value: string): number {
  const ms = parseDuration(value)
  if (ms === undefined) throw new InvalidArgumentError('expected a duration such as 30d, 12h, 15m or 90s')
  return ms
}

/**
 * Runs a command with the config read from the environment and the flags that stand for its
 * variables (the program's --db, serve's --port and --host), which win. Commander hands an action
 * its Command last.
 */
const withConfig =
  <A extends unknown[]>(run: (config: Config, ...args: A) => Promise<unknown>) =>
  async (...args: A) => {
    const command = args.at(-1) as Command
    await run(loadConfig(undefined, command.optsWithGlobals<ConfigFlags>()), ...args)
  }

/** A pipe's or FIFO's copy, handed by the command to the Node it starts to read it (cli/spool.ts). */
const spoolOption = () => new Option(`${SPOOL_OPTION} <path>`).hideHelp()

/** The bound of that copy (cli/spool.ts). */
const maxPipeOption = () =>
  new Option('--max-pipe-mb <n>', 'the most a pipe, FIFO or device may give, in MiB (a file is read in place, unbounded)')
    .argParser((value) => {
      const n = count(value)
      if (n === 0) throw new InvalidArgumentError('expected a whole number from 1')
      return n
    })
    .default(MAX_PIPE_MB)

const program = new Command('threadline')
  .description('Users, posts, comments and todos over REST and GraphQL.')
  .version(PACKAGE_VERSION)
  .option('--db <url>', 'the database, sqlite:FILE or postgres://… (env DATABASE_URL, default sqlite:data/threadline.db)')
  // Every command's --help lists --db too, under "Global Options".
  .configureHelp({ showGlobalOptions: true })
  .showHelpAfterError()

program
  .command('serve')
  .description('Migrate the database, fill a new one with demo data (unless SEED_DEMO_DATA=false) and serve on HOST:PORT')
  .option('--port <n>', 'port to listen on, 0 for any free one (env PORT, default 3000)')
  .option('--host <address>', 'interface to listen on, 0.0.0.0 for all (env HOST, default 127.0.0.1)')
  .action(withConfig(async (config) => withServerV8Settings(config.nodeOptions, async () => (await import('./server.js')).startServer(config))))

program
  .command('migrate')
  .description('Bring the database schema up to date')
  .action(withConfig(async (config) => (await commands()).migrateCommand(config)))

const seed = program.command('seed').description('Add generated users, posts, comments and todos, in batched inserts (the demo data by default)')
for (const { name, demo, help } of SEED_FLAGS) seed.option(`--${name} <n>`, help, count, demo)
seed
  .option('--batch-size <n>', `rows per INSERT statement, at most ${MAX_BATCH_SIZE}`, batchSize, 500)
  .option('--seed <n>', 'random seed: the same seed on an empty database gives the same data', count, 1)
  .action(withConfig(async (config, options: SeedCommandOptions) => (await commands()).seedCommand(config, options)))

program
  .command('import')
  .description('Load a Threadline export or a JSONPlaceholder /db file, keeping ids; checks it whole first, writes all or nothing')
  .argument('<file>', 'the JSON file')
  .option('--replace', 'empty comments, todos, posts, tokens and users first (same transaction)')
  .addOption(maxPipeOption())
  .addOption(spoolOption())
  .action(
    withConfig(async (config, file: string, options: { replace?: boolean; spool?: string; maxPipeMb: number }) =>
      (await import('./cli/import-command.js')).importCommand(config, file, options),
    ),
  )

program
  .command('reset')
  .description('Empty the database and load the demo data of a fresh serve, or FILE as import --replace does')
  .option('--from <file>', 'load this file instead of the demo data')
  .option('--yes', 'do not ask (needed when stdin is not a terminal)')
  .addOption(maxPipeOption())
  .addOption(spoolOption())
  .action(
    withConfig(async (config, options: { from?: string; yes?: boolean; spool?: string; maxPipeMb: number }) =>
      (await import('./cli/reset.js')).resetCommand(config, options),
    ),
  )

program
  .command('export')
  .description('Write the whole database as one JSON document, read in one transaction, to stdout or --output')
  .addOption(
    new Option('--format <format>', "threadline (import's format, with password hashes) or jsonplaceholder").choices(EXPORT_FORMATS).default('threadline'),
  )
  .option('--output <file>', 'write this file (whole or not at all) instead of stdout')
  .action(withConfig(async (config, options: ExportOptions) => (await import('./cli/export-data.js')).exportCommand(config, options)))

const users = program.command('users').description('Manage users')
users
  .command('create')
  .description('Create a user and print it as JSON')
  .requiredOption('--name <name>', 'display name')
  .requiredOption('--email <email>', 'e-mail address (unique)')
  .option('--role <role>', 'user or admin', 'user')
  .option('--age <age>', 'age in years', count)
  .option('--avatar <url>', 'https URL of a picture')
  .option('--password <password>', 'lets the user sign in with POST /tokens')
  .action(withConfig(async (config, options: Record<string, unknown>) => (await commands()).createUserCommand(config, options)))

const tokens = program.command('tokens').description('Manage bearer tokens')
tokens
  .command('create')
  .description('Create a bearer token for a user and print it alone on stdout')
  .requiredOption('--user <id|email>', 'the user the token acts for')
  .option('--ttl <duration>', 'lifetime, e.g. 30d, 12h, 15m', duration, duration('30d'))
  .addOption(new Option('--scope <scope>', 'read: GET, queries and subscriptions; write: all the user may do').choices(SCOPES).default('write'))
  .action(
    withConfig(async (config, options: { user: string; ttl: number; scope: Scope }) =>
      (await commands()).createTokenCommand(config, options.user, options.ttl, options.scope),
    ),
  )
tokens
  .command('revoke')
  .description('Revoke a bearer token')
  .argument('<token>', 'the token, as printed by tokens create')
  .action(withConfig(async (config, token: string) => (await commands()).revokeTokenCommand(config, token)))

/** Whether an error is one of Threadline's own, in the service's words. */
const ownError = (error: unknown): error is ConfigError | AppError => error instanceof ConfigError || error instanceof AppError

program.parseAsync().catch((error: unknown) => {
  if (ownError(error)) {
    console.error(`threadline: ${error.message}`)
    for (const detail of error instanceof AppError ? (error.details ?? []) : []) {
      console.error(`  ${detail.field === '' ? '' : `${detail.field}: `}${detail.message}`)
    }
  } else if (error instanceof Error && typeof (error as { code?: unknown }).code === 'string') {
    // The system's or the database's own words (EADDRINUSE, SQLITE_CANTOPEN, ...) say enough.
    console.error(`threadline: ${error.message}`)
  } else {
    console.error('threadline:', error)
  }
  process.exit(1)
})
