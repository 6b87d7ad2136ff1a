// Collections at scale: one user with 1,000,000 posts, served by a real `threadline serve`.
// Measures, with sequential requests over one keep-alive connection, the latency of
//   - the first page of 20 (cursor mode, v2, sort=-publishedAt),
//   - the 10,000th page of 20 reached by cursor (keyset: should cost what the first page costs),
//   - the deepest page by ?page (OFFSET) the offset window allows (page × limit ≤ 10,000),
//   - a q search that matches nothing, and one whose term is in 1% of the posts (every 100th
//     post's title carries a marker word, written after seeding: the full-text index follows the
//     update by its triggers), first page; each with the goal p99 < 50 ms,
//   - every page of that 1% search by cursor, 100 a page, to its end (each match once: a term in
//     more rows than the index binds is matched in the 10,000 rows past the cursor), and the
//     page past half of the matches, measured as the others,
// and prints p50/p99 (min–max) for each, the deep/first ratio, and writes bench/results/collections.json.
//
//   npm run bench:collections [-- --posts 1000000 --requests 300 --fresh]
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { Pool } from 'undici'
import { build, machine, type Stats, startServe, stats, threadline } from './lib.js'

const { values: args } = parseArgs({
  options: {
    posts: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '300' },
    'search-requests': { type: 'string', default: '100' },
    fresh: { type: 'boolean', default: false },
  },
})
const POSTS = Number(args.posts)
const REQUESTS = Number(args.requests)
const SEARCH_REQUESTS = Number(args['search-requests'])
const PAGE = 20
const DEEP_PAGE = Math.min(10_000, Math.floor(POSTS / PAGE))
/** Pages by offset stop at page × limit = MAX_OFFSET_ITEMS (10,000): the deepest such page. */
const DEEPEST_OFFSET_PAGE = Math.min(DEEP_PAGE, Math.floor(10_000 / PAGE))

const dataDir = join('bench', '.data')
const dbPath = join(dataDir, `collections-${POSTS}.db`)
const env = { DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: 'info' }
/** In the title of every 100th post: a term in 1% of the rows. */
const MARKER = 'quillmarker'
/** Searches should answer within this (p99, milliseconds). */
const SEARCH_GOAL_MS = 50

function prepareData(): void {
  if (args.fresh) rmSync(dbPath, { force: true })
  if (existsSync(dbPath)) return
  mkdirSync(dataDir, { recursive: true })
  console.log(`Seeding 1 user with ${POSTS.toLocaleString('en')} posts into ${dbPath} ...`)
  threadline(['migrate'], env)
  process.stdout.write(threadline(['seed', '--users', '1', '--posts', String(POSTS), '--comments', '0', '--todos', '0'], env))
  markOnePercent()
}

/** The marked posts an anonymous caller sees (drafts are their owner's): the matches of the 1% search. */
function countVisibleMarked(): number {
  const db = new Database(dbPath, { readonly: true })
  const row = db.prepare(`select count(*) as count from posts where status = 'published' and title like '%${MARKER}%'`).get() as { count: number }
  db.close()
  return row.count
}

/** Puts MARKER in the title of every 100th post (the full-text index follows by its triggers). */
function markOnePercent(): void {
  const started = performance.now()
  const db = new Database(dbPath)
  const { changes } = db.prepare(`update posts set title = title || ' ${MARKER}' where id % 100 = 0`).run()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  console.log(`marked ${changes.toLocaleString('en')} posts (1%) with "${MARKER}" in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

async function measure(pool: Pool, path: string, count: number): Promise<Stats> {
  for (let i = 0; i < Math.min(20, count); i++) await get(pool, path) // warm up
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    await get(pool, path)
    samples.push(performance.now() - started)
  }
  return stats(samples)
}

async function get(pool: Pool, path: string): Promise<{ meta: { pagination: { nextCursor: string | null } }; data: unknown[] }> {
  const res = await pool.request({ method: 'GET', path })
  const body = (await res.body.json()) as { meta: { pagination: { nextCursor: string | null } }; data: unknown[] }
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${JSON.stringify(body)}`)
  return body
}

const SEARCH_NO_MATCH = 'q search, no match'
const SEARCH_ONE_PERCENT = 'q search, 1% of rows match (first page)'
const SEARCH_WALK = 'q search, 1%: every page of 100 by cursor'
const SEARCH_DEEP = 'q search, 1%: the page past half of them'

interface SearchWalk {
  samples: number[]
  /** Matches found, each once. */
  found: number
  /** The nextCursor after half of them. */
  middle: string
}

/** Every page of `path` by cursor to the end, each request timed; fails if a match repeats. */
async function walkSearch(pool: Pool, path: string, expected: number): Promise<SearchWalk> {
  const samples: number[] = []
  const seen = new Set<number>()
  let middle: string | undefined
  let cursor: string | null = null
  do {
    const started = performance.now()
    const page = await get(pool, `${path}${cursor === null ? '' : `&cursor=${cursor}`}`)
    samples.push(performance.now() - started)
    for (const item of page.data as { id: number }[]) {
      if (seen.has(item.id)) throw new Error(`post ${item.id} came twice`)
      seen.add(item.id)
    }
    cursor = page.meta.pagination.nextCursor
    if (middle === undefined && seen.size >= expected / 2 && cursor !== null) middle = cursor
  } while (cursor !== null)
  if (middle === undefined) throw new Error(`the walk found ${seen.size} matches, too few for a page past half of them`)
  return { samples, found: seen.size, middle }
}

const ms = (n: number) => n.toFixed(2).padStart(8)

async function main(): Promise<void> {
  build()
  prepareData()
  // The representation cache off: a repeated GET would be answered from it, and this measures the reads.
  const server = await startServe({ ...env, RATE_LIMIT_MAX: '1000000000', HTTP_REPRESENTATION_CACHE_MB: '0' })
  const pool = new Pool(server.url, { connections: 1 })
  try {
    const base = `/api/v2/users/1/posts?limit=${PAGE}&sort=-publishedAt`
    // The cursor to page DEEP_PAGE, as the API issues it: the nextCursor of the page before it,
    // walked to by cursor in pages of 100 (a cursor does not depend on the limit; offset pages
    // stop at 10,000 items).
    let deepCursor: string | null = null
    for (let walked = 0; walked < (DEEP_PAGE - 1) * PAGE; walked += 100) {
      const page = await get(
        pool,
        `/api/v2/users/1/posts?limit=${Math.min(100, (DEEP_PAGE - 1) * PAGE - walked)}&sort=-publishedAt${deepCursor === null ? '' : `&cursor=${deepCursor}`}`,
      )
      deepCursor = page.meta.pagination.nextCursor
      if (deepCursor === null) throw new Error('the data set is too small for the deep page')
    }

    const scenarios: [string, string, number][] = [
      ['first page (cursor mode)', base, REQUESTS],
      [`page ${DEEP_PAGE} by cursor`, `${base}&cursor=${deepCursor}`, REQUESTS],
      [`page ${DEEPEST_OFFSET_PAGE} by ?page (OFFSET, the window's end)`, `${base}&page=${DEEPEST_OFFSET_PAGE}`, Math.max(20, Math.floor(REQUESTS / 10))],
      [SEARCH_NO_MATCH, `/api/v2/users/1/posts?limit=${PAGE}&q=nomatchanywhere`, SEARCH_REQUESTS],
      [SEARCH_ONE_PERCENT, `/api/v2/users/1/posts?limit=${PAGE}&q=${MARKER}`, SEARCH_REQUESTS],
    ]
    const results: Record<string, Stats> = {}
    const marked = countVisibleMarked()
    const walkStarted = performance.now()
    const walk = await walkSearch(pool, `/api/v2/users/1/posts?limit=100&q=${MARKER}`, marked)
    const walkSeconds = (performance.now() - walkStarted) / 1000
    scenarios.push([SEARCH_DEEP, `/api/v2/users/1/posts?limit=${PAGE}&q=${MARKER}&cursor=${walk.middle}`, SEARCH_REQUESTS])
    console.log(`\n${POSTS.toLocaleString('en')} posts of one user; sequential requests over one connection; milliseconds\n`)
    console.log(`${'scenario'.padEnd(36)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ${'min'.padStart(8)} ${'max'.padStart(8)}   n`)
    for (const [name, path, count] of scenarios) {
      const result = await measure(pool, path, count)
      results[name] = result
      console.log(`${name.padEnd(36)} ${ms(result.p50)} ${ms(result.p99)} ${ms(result.min)} ${ms(result.max)}   ${result.n}`)
    }
    const walked = stats(walk.samples)
    results[SEARCH_WALK] = walked
    console.log(`${SEARCH_WALK.padEnd(36)} ${ms(walked.p50)} ${ms(walked.p99)} ${ms(walked.min)} ${ms(walked.max)}   ${walked.n}`)
    console.log(
      `\nthe 1% search by cursor: ${walk.found.toLocaleString('en')} of ${marked.toLocaleString('en')} published marked posts found (${walk.found === marked ? 'every one' : 'NOT every one'}), each once, in ${walked.n} pages, ${walkSeconds.toFixed(1)} s`,
    )
    const first = results['first page (cursor mode)'] as Stats
    const deep = results[`page ${DEEP_PAGE} by cursor`] as Stats
    const ratio = { p50: deep.p50 / first.p50, p99: deep.p99 / first.p99 }
    const verdict = ratio.p50 <= 1.5 && ratio.p99 <= 1.5 ? 'within' : 'NOT within'
    console.log(`\ndeep cursor page / first page: p50 ${ratio.p50.toFixed(2)}x, p99 ${ratio.p99.toFixed(2)}x (${verdict} 1.5x)`)
    for (const name of [SEARCH_NO_MATCH, SEARCH_ONE_PERCENT, SEARCH_DEEP]) {
      const p99 = (results[name] as Stats).p99
      console.log(`${name}: p99 ${p99.toFixed(2)} ms (${p99 < SEARCH_GOAL_MS ? 'within' : 'NOT within'} the goal of ${SEARCH_GOAL_MS} ms)`)
    }

    mkdirSync(join('bench', 'results'), { recursive: true })
    writeFileSync(
      join('bench', 'results', 'collections.json'),
      `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), posts: POSTS, pageSize: PAGE, deepPage: DEEP_PAGE, results, ratio, searchWalk: { found: walk.found, marked, pages: walked.n, seconds: walkSeconds } }, null, 2)}\n`,
    )
    console.log('written to bench/results/collections.json')
  } finally {
    await pool.close()
    await server.stop()
  }
}

await main()
