// json-server's query words (src/collections/json-server-words.ts), row by row of JSON_SERVER_WORDS:
// each row's examples are sent to every list, and those of the words json-server reads on single
// items to every single item, on every mount; a word read as a Threadline form answers what that
// form answers, a refused one is 400 with a detail naming it. Then what the words mean is checked
// against json-server 0.17's own list route (a model of it below, over the same items), and the
// answers' links, caching and refusals, and docs/json-server.md's table against the row list.
import { readFileSync } from 'node:fs'
import type { RouteOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { JSON_SERVER_WORDS, type JsonServerWord, translateJsonServerWords, type WordTarget } from '../../src/collections/json-server-words.js'
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js'
import { createFactories } from '../helpers/factories.js'
import { idsForPath, seedEmptyFeatures } from '../helpers/seeded-rows.js'

const MOUNTS = ['/api/v1', '/api/v2', '']

interface Route {
  /** The path under a mount, its parameters filled in. */
  path: string
  target: WordTarget
  isList: boolean
}

let t: TestApp
const captured: (RouteOptions & { prefix: string })[] = []
let routes: Route[]

beforeAll(async () => {
  t = await buildTestApp({}, { onRoute: (route) => captured.push(route) })
  const make = createFactories(t)
  // Users with ties and missing values to sort and filter: two of a name, ages missing and repeated.
  for (const [name, age] of [
    ['Carol', 30],
    ['Carol', 25],
    ['dave', null],
    ['Erin', 41],
    ['Frank', 30],
    ['Grace', null],
    ['Heidi', 67],
    ['Ivan', 30],
    ['Judy', 25],
  ] as const) {
    await t.createUser({ name, email: `${name.toLowerCase()}.${age ?? 'x'}@example.com`, age })
  }
  const posts = []
  for (let n = 0; n < 12; n++) posts.push(await make.post(t.bob, { title: n % 3 === 0 ? 'Same title' : `Post ${n}` }))
  const first = posts[0]!
  const comments = []
  for (let n = 0; n < 12; n++) comments.push(await make.comment(first, n % 2 === 0 ? t.alice : t.bob))
  const todos = []
  for (let n = 0; n < 12; n++) todos.push(await make.todo(t.bob, { text: `Todo ${n % 4}` }))
  // The other features' rows come from their seed sections.
  await seedEmptyFeatures(t.database.db)
  // The fixture each path parameter names; a path with another parameter names seeded rows.
  const fixtures: Record<string, number> = { id: t.bob.id, userId: t.bob.id, postId: first.id, commentId: comments[0]!.id, todoId: todos[0]!.id }
  routes = []
  for (const route of captured.filter((route) => route.prefix === '/api/v1' && route.method === 'GET' && route.config?.representation !== undefined)) {
    const path = route.url.slice(route.prefix.length)
    const parameters = [...path.matchAll(/:(\w+)/g)].map(([, name]) => name!)
    const ids = parameters.every((name) => name in fixtures) ? fixtures : await idsForPath(t.database.db, path)
    const shape = route.config?.representation
    routes.push({
      path: path.replace(/:(\w+)/g, (_, name: string) => String(ids[name])),
      target: { collection: route.config?.collection, relations: shape?.relations ?? {}, references: shape?.references ?? {} },
      isList: route.config?.collection !== undefined,
    })
  }
})
afterAll(() => t.close())

/** A query string as Fastify reads it: a repeated key's values in an array. */
function parseQuery(text: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const known = query[key]
    query[key] = known === undefined ? value : [...(Array.isArray(known) ? known : [known]), value]
  }
  return query
}

/** What the examples' placeholders stand for on a route (WordExample.given says what each must be); undefined where it has none. */
function placeholders({ collection, relations, references }: WordTarget): Record<string, string | undefined> {
  const fields = [...(collection?.fields.values() ?? [])]
  const sorted = fields.filter((field) => field.sortable && field.filterable)
  // json-server's _expand=p reads the `ps` item named by `pId`.
  const expansion = Object.entries(references).find(([, { foreignKey, resource }]) => foreignKey.endsWith('Id') && resource === `${foreignKey.slice(0, -2)}s`)
  return {
    field: sorted.find((field) => !field.nullable && !field.caseInsensitive && field !== collection?.id)?.name,
    nullable: sorted.find((field) => field.nullable)?.name,
    caseless: fields.find((field) => field.caseInsensitive)?.name,
    searchable: collection?.defaultSearchFields[0]?.name,
    list: Object.keys(relations).find((name) => relations[name] === 'list'),
    expandable: expansion?.[1].foreignKey.slice(0, -2),
    expansion: expansion?.[0],
  }
}

/** The example's text with its placeholders filled for the route, or undefined if the route lacks one. */
function instantiate(text: string, values: Record<string, string | undefined>): string | undefined {
  let missing = false
  const filled = text.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name]
    if (value === undefined) missing = true
    return value ?? ''
  })
  return missing ? undefined : filled
}

interface Case {
  word: JsonServerWord
  route: Route
  given: string
  means: string | undefined
}

/** Every row's examples, on every route they apply to. */
function cases(): Case[] {
  return JSON_SERVER_WORDS.flatMap((word) =>
    routes
      .filter((route) => route.isList || word.on === 'lists and items')
      .flatMap((route) =>
        word.examples.flatMap((example) => {
          const values = placeholders(route.target)
          const given = instantiate(example.given, values)
          const means = example.means === undefined ? undefined : instantiate(example.means, values)
          return given === undefined ? [] : [{ word, route, given, means }]
        }),
      ),
  )
}

/** The answer's body without meta.timestamp, and its links as rel → path and sorted parameters. */
async function answer(url: string) {
  const res = await t.request({ url })
  const body = res.json()
  if (body.meta !== undefined) delete body.meta.timestamp
  const links = Object.fromEntries(
    String(res.headers.link ?? '')
      .split(', ')
      .filter((link) => link !== '')
      .map((link) => {
        const [, target = '', rel = ''] = /^<([^>]*)>; rel="(\w+)"$/.exec(link) ?? []
        const [path, search = ''] = target.split('?')
        return [
          rel,
          `${path}?${[...new URLSearchParams(search)]
            .map(([k, v]) => `${k}=${v}`)
            .sort()
            .join('&')}`,
        ]
      }),
  )
  return { status: res.statusCode, body, links }
}

/** Runs the tasks, four at a time. */
async function inTurns(tasks: (() => Promise<void>)[]): Promise<void> {
  const queue = [...tasks]
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let task = queue.shift(); task !== undefined; task = queue.shift()) await task()
    }),
  )
}

/** A key that is one of json-server's words rather than Threadline's own. */
const isWordKey = (key: string) => /_|\./.test(key) || key === 'callback'

describe('each word of the table', () => {
  it('is exercised on a list by at least one example, and a word json-server reads on single items on one of those too', () => {
    const all = cases()
    for (const word of JSON_SERVER_WORDS) {
      expect(all.filter((c) => c.word === word && c.route.isList).length, word.word).toBeGreaterThan(0)
      if (word.on === 'lists and items') expect(all.filter((c) => c.word === word && !c.route.isList).length, word.word).toBeGreaterThan(0)
      // A refused word has no example read as something; a word read as a form has one at least.
      if (word.kind === 'refused')
        expect(
          word.examples.every((example) => example.means === undefined),
          word.word,
        ).toBe(true)
      else
        expect(
          word.examples.some((example) => example.means !== undefined),
          word.word,
        ).toBe(true)
    }
  })

  it('is translated into exactly the Threadline query its examples say, or not at all when it is Threadline’s own word', () => {
    for (const { word, route, given, means } of cases()) {
      if (means === undefined) continue
      let translated: Record<string, unknown> | undefined
      try {
        const result = translateJsonServerWords(route.target, parseQuery(given))
        translated = result === undefined ? undefined : { ...result.query }
      } catch (error) {
        throw new Error(`${word.word}: ${given} on ${route.path} was refused: ${JSON.stringify((error as { details?: unknown }).details)}`)
      }
      if (word.kind === 'same word') expect(translated, `${given} on ${route.path}`).toBeUndefined()
      else expect(translated, `${given} on ${route.path}`).toEqual(parseQuery(means))
    }
  })

  it('answers as its Threadline form answers, links in Threadline’s words included, or 400 naming the word, on every route and mount', async () => {
    const failures: string[] = []
    // A few at a time: a caller's queue of waiting requests is bounded (429 past it).
    await inTurns(
      cases().map(({ route, given, means }) => async () => {
        for (const mount of MOUNTS) {
          const url = `${mount}${route.path}?${given}`
          const aliased = await answer(url)
          if (means === undefined) {
            const keys = Object.keys(parseQuery(given))
            const details: { field: string; message: string }[] = aliased.body.error?.details ?? []
            const named = details.map((detail) => detail.field)
            if (
              aliased.status !== 400 ||
              aliased.body.error?.code !== 'BAD_REQUEST' ||
              named.length === 0 ||
              !named.every((field) => keys.includes(field)) ||
              !named.some(isWordKey)
            ) {
              failures.push(`${url}: ${aliased.status} ${JSON.stringify(aliased.body)}`)
            }
            continue
          }
          const canonical = await answer(`${mount}${route.path}?${means}`)
          if (aliased.status !== 200 || canonical.status !== 200) failures.push(`${url}: ${aliased.status}, ${means}: ${canonical.status}`)
          else if (JSON.stringify(aliased.body) !== JSON.stringify(canonical.body)) failures.push(`${url}: answers unlike ${means}`)
          else if (JSON.stringify(aliased.links) !== JSON.stringify(canonical.links)) {
            failures.push(`${url}: links ${JSON.stringify(aliased.links)} unlike ${means}'s ${JSON.stringify(canonical.links)}`)
          }
        }
      }),
    )
    expect(failures).toEqual([])
  })
})

describe('what the words mean, against json-server 0.17', () => {
  type Item = Record<string, string | number | boolean | null | undefined>

  /** JavaScript's `<=`, as json-server compares a query's text with a value: as numbers where one is a number, else as text. */
  const lessOrEqual = (a: unknown, b: unknown): boolean => (a as number) <= (b as number)

  /** lodash's compareAscending, which json-server's orderBy sorts with: null and undefined last. */
  function compareAscending(value: unknown, other: unknown): number {
    if (value === other) return 0
    const [v, o] = [value as number, other as number]
    const valIsDefined = value !== undefined
    const valIsNull = value === null
    const othIsDefined = other !== undefined
    const othIsNull = other === null
    if ((!othIsNull && v > o) || (valIsNull && othIsDefined) || !valIsDefined) return 1
    if ((!valIsNull && v < o) || (othIsNull && valIsDefined) || !othIsDefined) return -1
    return 0
  }

  /**
   * json-server 0.17's GET /<collection> over `items` (in the data's order): its filters (text
   * equality, `_gte`/`_lte` by JavaScript's comparison, `_ne` by text, a missing value matching
   * none), lodash's stable orderBy, then `_page` (10 a page by default), `_end`, `_limit` from `_start`.
   */
  function jsonServer(items: readonly Item[], query: string): number[] {
    const params = new URLSearchParams(query)
    let chain = [...items]
    for (const key of new Set(params.keys())) {
      if (key.startsWith('_') || key === 'q') continue
      const values = params.getAll(key)
      const operator = /_(gte|lte|ne)$/.exec(key)?.[1]
      const path = operator === undefined ? key : key.slice(0, -operator.length - 1)
      chain = chain.filter((item) => {
        const results = values.map((value) => {
          const element = item[path]
          if (element === undefined || element === null) return undefined
          if (operator === 'gte') return lessOrEqual(value, element)
          if (operator === 'lte') return lessOrEqual(element, value)
          if (operator === 'ne') return value !== String(element)
          return value === String(element)
        })
        return results.reduce((a, b) => (operator === 'ne' ? a && b : a || b))
      })
    }
    const sort = params.get('_sort')
    if (sort !== null) {
      const names = sort.split(',')
      const orders = (params.get('_order') ?? '').split(',').map((order) => order.toLowerCase())
      chain = chain
        .map((item, index) => ({ item, index }))
        .sort((a, b) => {
          for (const [at, name] of names.entries()) {
            const result = compareAscending(a.item[name], b.item[name])
            if (result !== 0) return orders[at] === 'desc' ? -result : result
          }
          return a.index - b.index
        })
        .map(({ item }) => item)
    }
    const [page, limit, start, end] = ['_page', '_limit', '_start', '_end'].map((name) => params.get(name))
    if (page !== null) {
      const size = Number.parseInt(limit ?? '', 10) || 10
      chain = chain.slice((Number(page) - 1) * size, Number(page) * size)
    } else if (end !== null) {
      chain = chain.slice(Number.parseInt(start ?? '', 10) || 0, Number(end))
    } else if (limit !== null) {
      const from = Number.parseInt(start ?? '', 10) || 0
      chain = chain.slice(from, from + Number(limit))
    }
    return chain.map((item) => item.id as number)
  }

  const idsOf = async (url: string): Promise<number[]> => {
    const res = await t.request({ url })
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200)
    return res.json().data.map((item: { id: number }) => item.id)
  }

  it('finds the items json-server finds, in its order, on users', async () => {
    const users: Item[] = (await t.request({ url: '/api/v1/users?limit=100' })).json().data
    expect(users.length).toBeGreaterThan(10)
    const someone = users[5] as { createdAt: string; name: string }
    for (const query of [
      '_sort=name',
      '_sort=name&_order=desc',
      '_sort=role,name&_order=desc,asc',
      '_sort=role&_order=DESC',
      '_sort=createdAt&_order=desc',
      '_page=2&_limit=3',
      '_page=1',
      '_page=2',
      '_start=4&_end=6',
      '_start=3&_limit=3',
      '_end=4',
      '_limit=5',
      'age_gte=30&age_lte=41',
      'age_gte=030',
      'age_ne=30',
      'age_ne=30&age_ne=25',
      'age=30&age=25',
      'name_gte=E',
      'name_lte=Carol',
      'name_ne=Carol',
      'role_ne=admin',
      `createdAt_gte=${someone.createdAt}`,
      `createdAt_lte=${someone.createdAt}`,
      'id_ne=1',
      '_sort=name&_order=desc&_page=1&_limit=4&age_gte=25',
      '_sort=name&_start=2&_end=4&age_ne=41',
    ]) {
      for (const mount of MOUNTS) expect(await idsOf(`${mount}/users?${query}`), `${mount}/users?${query}`).toEqual(jsonServer(users, query))
    }
  })

  it('finds the posts, comments and todos json-server finds, ties in id order', async () => {
    for (const path of routes.filter((route) => route.isList && route.path !== '/users').map((route) => route.path)) {
      const items: Item[] = (await t.request({ url: `/api/v1${path}?limit=100` })).json().data
      const field = placeholders(routes.find((route) => route.path === path)!.target).field as string
      for (const query of [`_sort=${field}&_order=desc`, `_sort=${field}`, `_sort=${field}&_order=desc&_start=3&_end=6`, 'id_gte=3&id_ne=5&_limit=4']) {
        // Without a word that pages, json-server answers every item and Threadline its first page (20) of the same order.
        const found = jsonServer(items, query)
        expect(await idsOf(`/api/v1${path}?${query}`), `${path}?${query}`).toEqual(/_limit|_end|_page/.test(query) ? found : found.slice(0, 20))
      }
    }
  })

  it('refuses what json-server would answer otherwise: Threadline sorts a missing age first, json-server last', async () => {
    const users: Item[] = (await t.request({ url: '/api/v1/users?limit=100' })).json().data
    expect(await idsOf('/api/v1/users?sort=age')).not.toEqual(jsonServer(users, '_sort=age'))
    expect((await t.request({ url: '/api/v1/users?_sort=age' })).statusCode).toBe(400)
    // json-server's _ne drops a missing age, Threadline's ne keeps it: hence [null]=false beside it.
    expect(await idsOf('/api/v1/users?age[ne]=30')).not.toEqual(jsonServer(users, 'age_ne=30'))
  })
})

describe('refusals', () => {
  const refusal = async (url: string) => {
    const res = await t.request({ url })
    expect(res.statusCode, res.body).toBe(400)
    return res.json().error.details as { field: string; message: string }[]
  }

  it('name the Threadline form to use instead', async () => {
    expect(await refusal('/api/v1/users?name_like=^C')).toEqual([
      { field: 'name_like', message: "is json-server's regular expression match, which Threadline does not have: q=text&fields=name finds text within name" },
    ])
    expect((await refusal('/api/v1/users?_embed=posts'))[0]?.message).toMatch(/include=posts embeds the newest 20/)
    expect((await refusal('/api/v1/users?_sort=age&_order=desc'))[0]?.message).toMatch(/sort=-age in Threadline's order$/)
    expect((await refusal('/api/v1/users?_start=5&_end=15'))[0]?.message).toMatch(/page=1, 2, 3, …&limit=10/)
    expect((await refusal('/api/v1/users?_limit=500'))[0]?.message).toMatch(/limit=100, then the page at nextCursor/)
    expect((await refusal('/api/v1/users?age_gt=3'))[0]?.message).toMatch(/age\[gt\]=v in Threadline/)
    expect(await refusal('/api/v1/users?_page=2&page=2')).toEqual([{ field: '_page', message: 'means page, which is given too: give one of them' }])
    expect(await refusal('/api/v1/users?_start=0&_end=5&limit=5')).toEqual([{ field: '_end', message: 'means limit, which is given too: give one of them' }])
  })

  it('name the word as sent when its Threadline form refuses the value', async () => {
    expect(await refusal('/api/v1/users?_page=0')).toEqual([{ field: '_page', message: 'must be an integer of at least 1' }])
    expect(await refusal('/api/v1/users?age_gte=abc')).toEqual([{ field: 'age_gte', message: expect.stringMatching(/^must be an integer/) }])
    expect(await refusal('/api/v1/users?_sort=height')).toEqual([{ field: '_sort', message: '"height" is not a field of this collection' }])
    expect((await refusal('/api/v1/users?_page=10000&_limit=5'))[0]?.field).toBe('_page')
    expect(await refusal('/api/v1/users?views_gte=3')).toEqual([{ field: 'views_gte', message: 'is not a field of this collection' }])
    expect(await refusal('/api/v1/users?age_gte=3&age_gte=4')).toEqual([{ field: 'age_gte', message: 'may be given only once' }])
  })

  it('on a single item, come with the parameters it does not take, each named once', async () => {
    const post = routes.find((route) => !route.isList && route.target.references.author?.foreignKey === 'userId') as Route
    expect((await refusal(`${post.path}?nonsense=1&_expand=user&_embed=comments&_page=2`)).map((detail) => detail.field)).toEqual([
      'nonsense',
      '_embed',
      '_page',
    ])
  })

  it('refuse any parameter a single item does not take, on every mount, as a list refuses one', async () => {
    for (const route of routes) {
      for (const mount of MOUNTS) {
        const details = await refusal(`${mount}${route.path}?bogus=1`)
        expect(details.map((detail) => detail.field)).toEqual(['bogus'])
        // A list's words on a single item are parameters it does not take.
        if (!route.isList) expect((await refusal(`${mount}${route.path}?_page=1`)).map((detail) => detail.field)).toEqual(['_page'])
      }
    }
  })
})

describe('caching and links', () => {
  it('keeps an aliased answer under its own URL: never the answer of another spelling', async () => {
    const canonical = await answer('/api/v1/users?page=2')
    const aliased = await answer('/api/v1/users?_page=2')
    expect(canonical.body.meta.pagination.limit).toBe(20)
    expect(aliased.body.meta.pagination.limit).toBe(10)
    // Again, now both are kept.
    expect((await answer('/api/v1/users?_page=2')).body).toEqual(aliased.body)
    expect((await answer('/api/v1/users?page=2')).body).toEqual(canonical.body)
    const ascending = await t.request({ url: '/api/v1/users?_sort=name' })
    const descending = await t.request({ url: '/api/v1/users?_sort=name&_order=desc' })
    expect(ascending.headers.etag).not.toBe(descending.headers.etag)
    expect((await t.request({ url: '/api/v1/users?_sort=name&_order=desc', headers: { 'if-none-match': String(ascending.headers.etag) } })).statusCode).toBe(
      200,
    )
    expect((await t.request({ url: '/api/v1/users?_sort=name&_order=desc', headers: { 'if-none-match': String(descending.headers.etag) } })).statusCode).toBe(
      304,
    )
  })

  it('links the next page in Threadline’s words, which answers the next json-server page', async () => {
    const first = await t.request({ url: '/api/v1/users?_page=1&_limit=4&_sort=name&_order=desc' })
    const next = /<([^>]*)>; rel="next"/.exec(String(first.headers.link))?.[1] as string
    expect(Object.fromEntries(new URLSearchParams(next.split('?')[1]))).toEqual({ limit: '4', sort: '-name,id', page: '2' })
    const followed = await t.request({ url: next })
    const second = await t.request({ url: '/api/v1/users?_page=2&_limit=4&_sort=name&_order=desc' })
    expect(followed.json().data).toEqual(second.json().data)
  })
})

describe('docs/json-server.md', () => {
  it('shows the table the code reads, row by row', () => {
    const cell = (text: string) => text.replaceAll('|', '\\|')
    const threadline = (word: JsonServerWord) =>
      word.kind === 'alias'
        ? `read as ${word.threadline}`
        : word.kind === 'refused'
          ? `refused; instead: ${word.threadline}`
          : `the same word: ${word.threadline}`
    const table = [
      '| json-server 0.17 | On | Threadline | Exactly |',
      '|---|---|---|---|',
      ...JSON_SERVER_WORDS.map((word) => `| \`${cell(word.word)}\` | ${word.on} | ${cell(threadline(word))} | ${cell(word.rule)} |`),
    ].join('\n')
    expect(readFileSync(new URL('../../docs/json-server.md', import.meta.url), 'utf8')).toContain(table)
  })
})
