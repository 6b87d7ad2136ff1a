// json-server's query words (version 0.17), for callers that come from it: each word that means
// exactly what a Threadline form means is read as that form; each that does not is refused with
// the form to use instead, never ignored. JSON_SERVER_WORDS is the one list of them: the
// translation below recognizes a word by it, docs/json-server.md shows it (a test holds the two
// equal) and the words' test runs its examples on every collection. "Exactly" is judged against
// json-server 0.17's own code: which items, in which order, whatever the data; the answer is still
// Threadline's envelope and representation.
//
// A query holding none of the words costs one look at its keys (mayHoldJsonServerWords). A query
// holding some is rewritten into Threadline's words before anything reads it, and `given` keeps,
// for each parameter a word became, the word as sent, so that a refusal of the value names it.
import { parseInstant } from '../core/instant.js'
import { AppError, type ErrorDetail } from '../errors.js'
import type { CollectionSpec, FieldSpec } from './collection-spec.js'
import { DEFAULT_EMBEDDED_LIMIT, type Reference } from './embedding.js'
import { MAX_PAGE_LIMIT } from './pagination.js'

/** How Threadline reads a word: as its own form, not at all (400, naming the form to use), or as the same word in its own sense. */
export type WordKind = 'alias' | 'refused' | 'same word'

/** One of the words' test cases: a query string and the Threadline query it means, or none when it is refused. */
export interface WordExample {
  /**
   * The query string sent. `{…}` names a field or relation of the collection it is sent to:
   * `{field}` one that sorts and filters and is never missing (not the id, nor e-mail), `{nullable}`
   * one that sorts and filters and may be missing, `{caseless}` one compared without regard to case,
   * `{searchable}` one `q` searches, `{list}` an embedded list, `{expandable}` a json-server parent name
   * and `{expansion}` the relation it is read as. A collection without the field is not sent the example.
   */
  readonly given: string
  /** The query in Threadline's words it is read as; absent, it is refused (400, a detail naming the word). */
  readonly means?: string
}

export interface JsonServerWord {
  /** As json-server writes it: `x` stands for a field, `r` for a relation, `p` for a parent. */
  readonly word: string
  /** Where json-server reads it: on lists only, or on a single item too. */
  readonly on: 'lists' | 'lists and items'
  readonly kind: WordKind
  /** The Threadline form it is read as, or to use instead. */
  readonly threadline: string
  /** Exactly when, and why. */
  readonly rule: string
  /** The query keys that are this word (`nested`: a key with a dot, but not `<relation>.limit`); none for a word that is Threadline's own too. */
  readonly match?: { readonly names: readonly string[] } | { readonly suffixes: readonly string[] } | { readonly nested: true }
  /** What reads it: one of the translation's readers (below), or the detail of a word refused whatever its value. */
  readonly read?: Reader | { readonly refusal: string }
  readonly examples: readonly WordExample[]
}

/** The translation's readers: some words are read together, since what json-server makes of one depends on another. */
type Reader = 'paging' | 'sorting' | 'operators' | 'expanding' | 'embedding' | 'nested'

/** The words, in the order the documentation gives them. */
export const JSON_SERVER_WORDS: readonly JsonServerWord[] = [
  {
    word: '_page=N',
    on: 'lists',
    kind: 'alias',
    threadline: '`page=N`',
    rule:
      "With `limit=10` when neither `_limit` nor `limit` is given: json-server's pages hold 10 items, Threadline's 20. " +
      'A whole number from 1: json-server reads `0` or `abc` as page 1, Threadline refuses them.',
    match: { names: ['_page'] },
    read: 'paging',
    examples: [
      { given: '_page=2', means: 'page=2&limit=10' },
      { given: '_page=2&_limit=3', means: 'page=2&limit=3' },
      { given: '_page=2&limit=3', means: 'page=2&limit=3' },
      { given: '_page=0' },
      { given: '_page=2&page=2' },
    ],
  },
  {
    word: '_limit=N',
    on: 'lists',
    kind: 'alias',
    threadline: '`limit=N`',
    rule:
      `From 1 to ${MAX_PAGE_LIMIT}. json-server has no bound: a larger \`_limit\` is refused, where Threadline's own \`limit\` ` +
      `would be cut to ${MAX_PAGE_LIMIT}. With \`_start\`: see \`_start\`.`,
    match: { names: ['_limit'] },
    read: 'paging',
    examples: [{ given: '_limit=3', means: 'limit=3' }, { given: `_limit=${MAX_PAGE_LIMIT + 1}` }, { given: '_limit=3&limit=3' }],
  },
  {
    word: '_sort=a,b',
    on: 'lists',
    kind: 'alias',
    threadline: '`sort=a,b`, `-` where `_order` says `desc`',
    rule:
      "Ties keep the items' id order, as json-server's stable sort keeps the data's order: after a descending last field, " +
      '`id` is added (`_sort=a&_order=desc` is `sort=-a,id`). Refused on a field that may be missing (json-server sorts ' +
      'missing values last ascending and first descending, Threadline the other way round) and on one Threadline compares ' +
      'without regard to case (e-mail). json-server 0.17 has no `-` prefix.',
    match: { names: ['_sort'] },
    read: 'sorting',
    examples: [
      { given: '_sort=id', means: 'sort=id' },
      { given: '_sort=id&_order=desc', means: 'sort=-id' },
      { given: '_sort={field}&_order=DESC', means: 'sort=-{field},id' },
      { given: '_sort={field},id&_order=desc,asc', means: 'sort=-{field},id' },
      { given: '_sort={field},id&_order=asc,desc', means: 'sort={field},-id' },
      { given: '_sort={nullable}' },
      { given: '_sort={caseless}' },
      { given: '_sort=-id' },
      { given: '_sort=id&sort=id' },
    ],
  },
  {
    word: '_order=desc,asc',
    on: 'lists',
    kind: 'alias',
    threadline: '`-` before the field in `sort`',
    rule:
      '`asc` or `desc`, in any case, one per `_sort` field (comma-separated); a field without one ascends. ' +
      'Only beside `_sort`: json-server ignores it alone.',
    match: { names: ['_order'] },
    read: 'sorting',
    examples: [
      { given: '_sort=id&_order=asc', means: 'sort=id' },
      { given: '_order=desc' },
      { given: '_sort=id&_order=up' },
      { given: '_sort=id&_order=asc,desc' },
    ],
  },
  {
    word: '_start=S',
    on: 'lists',
    kind: 'alias',
    threadline: '`page=S/L+1&limit=L`',
    rule:
      '`_start=S&_end=E` is `page=S/(E−S)+1&limit=E−S`, and `_start=S&_limit=L` is `page=S/L+1&limit=L`, ' +
      `when the slice is a page: S a multiple of its length L, from 1 to ${MAX_PAGE_LIMIT}. Other slices are refused ` +
      "(Threadline's pages start at multiples of their limit), and so is `_start` alone or beside `_page`, which json-server ignores.",
    match: { names: ['_start'] },
    read: 'paging',
    examples: [
      { given: '_start=20&_end=30', means: 'page=3&limit=10' },
      { given: '_start=0&_end=5', means: 'page=1&limit=5' },
      { given: '_start=6&_limit=3', means: 'page=3&limit=3' },
      { given: '_start=5&_end=15' },
      { given: '_start=5' },
      { given: `_start=0&_end=${MAX_PAGE_LIMIT + 1}` },
      { given: '_page=1&_start=0&_limit=5' },
    ],
  },
  {
    word: '_end=E',
    on: 'lists',
    kind: 'alias',
    threadline: '`limit=E`',
    rule: `Alone, \`_end=E\` (from 1 to ${MAX_PAGE_LIMIT}) is \`limit=E\`; with \`_start\`, see \`_start\`. Refused beside \`_limit\` or \`_page\`, one of which json-server ignores.`,
    match: { names: ['_end'] },
    read: 'paging',
    examples: [{ given: '_end=5', means: 'limit=5' }, { given: '_end=0' }, { given: '_end=5&_limit=5' }, { given: '_end=5&_page=1' }],
  },
  {
    word: 'x_gte=v',
    on: 'lists',
    kind: 'alias',
    threadline: '`x[gte]=v`',
    rule:
      "Once. An instant is written as the API writes it (`2026-01-01T00:00:00.000Z`), in which json-server's comparison of text " +
      'orders instants as time does. Refused on e-mail, which json-server compares with case.',
    match: { suffixes: ['_gte'] },
    read: 'operators',
    examples: [
      { given: 'id_gte=2', means: 'id[gte]=2' },
      { given: 'id_gte=2&id_lte=3', means: 'id[gte]=2&id[lte]=3' },
      { given: 'createdAt_gte=2020-01-01T00:00:00.000Z', means: 'createdAt[gte]=2020-01-01T00:00:00.000Z' },
      { given: 'createdAt_gte=2020-01-01T00:00:00Z' },
      { given: '{caseless}_gte=a' },
      { given: 'id_gte=2&id[gte]=2' },
    ],
  },
  {
    word: 'x_lte=v',
    on: 'lists',
    kind: 'alias',
    threadline: '`x[lte]=v`',
    rule: 'As `_gte`.',
    match: { suffixes: ['_lte'] },
    read: 'operators',
    examples: [{ given: 'id_lte=3', means: 'id[lte]=3' }, { given: '{caseless}_lte=a' }],
  },
  {
    word: 'x_ne=v',
    on: 'lists',
    kind: 'alias',
    threadline: '`x[ne]=v`, and `x[null]=false` where `x` may be missing',
    rule:
      "Repeated, none of the values, as in json-server. json-server's `_ne` never matches a missing value, Threadline's `ne` " +
      'does: on a field that may be missing, `x[null]=false` is added. json-server compares text: the value is written as the API ' +
      'writes it (`30`, not `030`; an instant as for `_gte`). Refused on e-mail, which json-server compares with case.',
    match: { suffixes: ['_ne'] },
    read: 'operators',
    examples: [
      { given: 'id_ne=1', means: 'id[ne]=1' },
      { given: 'id_ne=1&id_ne=2', means: 'id[ne]=1&id[ne]=2' },
      { given: '{nullable}_ne=null', means: '{nullable}[ne]=null&{nullable}[null]=false' },
      { given: 'id_ne=01' },
      { given: '{caseless}_ne=a' },
    ],
  },
  {
    word: 'x_like=re',
    on: 'lists',
    kind: 'refused',
    threadline: '`q=text&fields=x`',
    rule:
      'json-server matches a regular expression, without regard to case; Threadline has none. `q=text&fields=x` finds text ' +
      'within `x` (without regard to case, on SQLite for ASCII letters only).',
    match: { suffixes: ['_like'] },
    read: 'operators',
    examples: [{ given: '{searchable}_like=a' }],
  },
  {
    word: '_embed=r',
    on: 'lists and items',
    kind: 'refused',
    threadline: '`include=r`',
    rule:
      `json-server embeds every one of the children, oldest first; Threadline's \`include=r\` embeds the newest ${DEFAULT_EMBEDDED_LIMIT} ` +
      `(\`r.limit\` up to ${MAX_PAGE_LIMIT}), newest first. Ask for that knowing it, or read the children's own list.`,
    match: { names: ['_embed'] },
    read: 'embedding',
    examples: [{ given: '_embed={list}' }],
  },
  {
    word: '_expand=p',
    on: 'lists and items',
    kind: 'alias',
    threadline: '`include=` the relation read from `pId`',
    rule:
      "json-server embeds the item of the `ps` collection that the item's `pId` names. Where one of the item's relations is " +
      "exactly that, `_expand=p` includes it, under the relation's name; elsewhere it is refused. Repeated as json-server " +
      'repeats it (it splits no commas).',
    match: { names: ['_expand'] },
    read: 'expanding',
    examples: [
      { given: '_expand={expandable}', means: 'include={expansion}' },
      { given: '_expand=nothing' },
      { given: '_expand={expandable}&include={expansion}' },
    ],
  },
  {
    word: 'x_gt=v, x_lt=v',
    on: 'lists',
    kind: 'refused',
    threadline: '`x[gt]=v`, `x[lt]=v`',
    rule: "json-server 1.0's words, which 0.17 ignores (it answers as if they were not there).",
    match: { suffixes: ['_gt', '_lt'] },
    read: 'operators',
    examples: [{ given: 'id_gt=1' }, { given: 'id_lt=1' }],
  },
  {
    word: '_per_page=N',
    on: 'lists',
    kind: 'refused',
    threadline: '`limit=N`',
    rule: "json-server 1.0's page size, which 0.17 ignores.",
    match: { names: ['_per_page'] },
    read: { refusal: "is json-server 1.0's page size, which 0.17 ignores: limit=N in Threadline" },
    examples: [{ given: '_per_page=5' }],
  },
  {
    word: 'a.b=v',
    on: 'lists',
    kind: 'refused',
    threadline: "a filter on the collection's own fields",
    rule: "json-server filters on a property inside a property; Threadline filters a collection's own fields (a related item by the field holding its id).",
    match: { nested: true },
    read: 'nested',
    examples: [{ given: 'author.name=a' }],
  },
  {
    word: '_delay=ms',
    on: 'lists and items',
    kind: 'refused',
    threadline: 'leave it out',
    rule: 'json-server waits before answering; Threadline answers at once.',
    match: { names: ['_delay'] },
    read: { refusal: "is json-server's delay; Threadline answers at once: leave it out" },
    examples: [{ given: '_delay=100' }],
  },
  {
    word: 'callback=f',
    on: 'lists and items',
    kind: 'refused',
    threadline: 'leave it out',
    rule: 'JSONP. Threadline answers JSON only; a page on another origin reads it through CORS (`CORS_ORIGINS`).',
    match: { names: ['callback'] },
    read: { refusal: 'asks for JSONP; Threadline answers JSON only: leave it out (a page on another origin reads it through CORS)' },
    examples: [{ given: 'callback=f' }],
  },
  {
    word: '_=n',
    on: 'lists and items',
    kind: 'refused',
    threadline: 'leave it out',
    rule: "jQuery's cache-buster, which json-server ignores. Threadline ignores no parameter; its answers are revalidated anyway (`max-age=0`, `ETag`).",
    match: { names: ['_'] },
    read: { refusal: 'is a cache-buster json-server ignores; Threadline ignores no parameter: leave it out (answers revalidate by their ETag)' },
    examples: [{ given: '_=1' }],
  },
  {
    word: 'x=v',
    on: 'lists',
    kind: 'same word',
    threadline: '`x=v`',
    rule: "Threadline's equality: by the field's type (`age=030` is 30; e-mail without regard to case), where json-server compares text.",
    examples: [{ given: 'id=1', means: 'id=1' }],
  },
  {
    word: 'q=text',
    on: 'lists',
    kind: 'same word',
    threadline: '`q=text`',
    rule: "Threadline's search: text within the text fields (or those `fields` names), where json-server looks in every value, numbers and ids included.",
    examples: [{ given: 'q=a', means: 'q=a' }],
  },
]

/** What a route's words are judged against: its collection (a list) and what its items may embed. */
export interface WordTarget {
  /** The collection a list reads; undefined on a single item. */
  readonly collection: CollectionSpec | undefined
  readonly relations: Readonly<Record<string, 'one' | 'list'>>
  readonly references: Readonly<Record<string, Reference>>
}

/** A query in Threadline's words. */
export interface TranslatedQuery {
  readonly query: Readonly<Record<string, unknown>>
  /** For each parameter a word became, the word as sent. */
  readonly given: ReadonlyMap<string, string>
}

type RawQuery = Readonly<Record<string, unknown>>

/** The cheap look every query gets: whether any key could be one of the words (one with `_`, `callback`, or a dot but not `.limit`). */
export function mayHoldJsonServerWords(query: RawQuery): boolean {
  for (const key in query) {
    if (key.includes('_') || key === 'callback' || (key.includes('.') && !key.endsWith('.limit'))) return true
  }
  return false
}

/**
 * The query in Threadline's words, or undefined when it holds none of json-server's. BAD_REQUEST,
 * one detail per word, when a word has no exact Threadline form here, or is given beside its form.
 */
export function translateJsonServerWords(target: WordTarget, raw: RawQuery): TranslatedQuery | undefined {
  const found = new Map<Handler, string[]>()
  const query: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (const key of Object.keys(raw)) {
    const word = wordOf(target, key)
    if (word === undefined) {
      query[key] = raw[key]
      continue
    }
    const handler = HANDLERS.get(word) as Handler
    found.set(handler, [...(found.get(handler) ?? []), key])
  }
  if (found.size === 0) return undefined
  const problems: ErrorDetail[] = []
  const given = new Map<string, string>()
  const context: Context = {
    raw,
    target,
    refuse: (field, message) => void problems.push({ field, message }),
    set(parameter, value, word) {
      if (parameter in query) {
        const other = given.get(parameter)
        problems.push({ field: word, message: `means ${parameter}, ${other === undefined ? 'which is given too' : `as ${other} does`}: give one of them` })
        return
      }
      query[parameter] = value
      given.set(parameter, word)
    },
    has: (parameter) => parameter in query,
  }
  for (const handler of HANDLED_IN_ORDER) {
    const keys = found.get(handler)
    if (keys !== undefined) handler(context, keys)
  }
  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The query parameters are not valid', problems)
  return { query, given }
}

interface Context {
  readonly raw: RawQuery
  readonly target: WordTarget
  refuse(word: string, message: string): void
  /** Sets a Threadline parameter for a word, unless the query already has it (then the word is refused as ambiguous). */
  set(parameter: string, value: unknown, word: string): void
  has(parameter: string): boolean
}

/** Reads the words it is given (keys of the query) into the context; each handler runs once per query, whichever of its words are there. */
type Handler = (context: Context, keys: readonly string[]) => void

const REFUSED = Symbol('refused')

/** A word's one value; refused when repeated. */
function one(context: Context, word: string): string | undefined | typeof REFUSED {
  const value = context.raw[word]
  if (value === undefined) return undefined
  if (typeof value === 'string') return value
  context.refuse(word, 'may be given only once')
  return REFUSED
}

const WHOLE_NUMBER = /^\d{1,15}$/
const POSITIVE = /^0*[1-9]\d{0,14}$/

/** `_page`, `_limit`, `_start` and `_end`, together: which of them json-server reads depends on the others. */
const paging: Handler = (context) => {
  const page = one(context, '_page')
  const limit = one(context, '_limit')
  const start = one(context, '_start')
  const end = one(context, '_end')
  if (page === REFUSED || limit === REFUSED || start === REFUSED || end === REFUSED) return
  const ignoredBeside = (word: string, other: string) => context.refuse(word, `is ignored by json-server beside ${other}: give one of them`)
  if (limit !== undefined && POSITIVE.test(limit) && Number(limit) > MAX_PAGE_LIMIT) {
    context.refuse(
      '_limit',
      `json-server would answer ${Number(limit)} items; a Threadline page holds at most ${MAX_PAGE_LIMIT}: limit=${MAX_PAGE_LIMIT}, then the page at nextCursor`,
    )
    return
  }
  if (page !== undefined) {
    if (start !== undefined) ignoredBeside('_start', '_page')
    if (end !== undefined) ignoredBeside('_end', '_page')
    context.set('page', page, '_page')
    if (limit !== undefined) context.set('limit', limit, '_limit')
    else if (!context.has('limit')) context.set('limit', String(JSON_SERVER_PAGE_LIMIT), '_page')
    return
  }
  if (start === undefined && end === undefined) {
    if (limit !== undefined) context.set('limit', limit, '_limit')
    return
  }
  if (end !== undefined && limit !== undefined) return ignoredBeside('_limit', '_end')
  if (end === undefined && limit === undefined) {
    return context.refuse('_start', 'is read by json-server only with _end or _limit: page=N&limit=L starts at item (N−1)×L')
  }
  if (start !== undefined && !WHOLE_NUMBER.test(start)) return context.refuse('_start', 'must be a whole number from 0')
  const from = start === undefined ? 0 : Number(start)
  let length: number
  if (end !== undefined) {
    if (!WHOLE_NUMBER.test(end) || Number(end) <= from) return context.refuse('_end', `must be a whole number greater than _start (${from})`)
    length = Number(end) - from
    if (length > MAX_PAGE_LIMIT) {
      return context.refuse(
        '_end',
        `json-server would answer ${length} items; a Threadline page holds at most ${MAX_PAGE_LIMIT}: page=N&limit=${MAX_PAGE_LIMIT}`,
      )
    }
  } else {
    if (!POSITIVE.test(limit as string)) return context.refuse('_limit', 'must be an integer of at least 1')
    length = Number(limit)
  }
  const sizeWord = end !== undefined ? '_end' : '_limit'
  if (start === undefined) return context.set('limit', String(length), sizeWord)
  if (from % length !== 0) {
    return context.refuse(
      '_start',
      `is not where a page of ${length} starts: Threadline's pages of ${length} start at items 0, ${length}, ${2 * length}, … (page=1, 2, 3, …&limit=${length})`,
    )
  }
  context.set('page', String(from / length + 1), '_start')
  context.set('limit', String(length), sizeWord)
}

/** json-server's page size when `_page` comes without `_limit`. */
const JSON_SERVER_PAGE_LIMIT = 10

/** `_sort` and `_order`: lodash's orderBy over the collection in its own (id) order. */
const sorting: Handler = (context) => {
  const sort = one(context, '_sort')
  const order = one(context, '_order')
  if (sort === REFUSED || order === REFUSED) return
  if (sort === undefined) return context.refuse('_order', 'applies only with _sort (json-server ignores it alone): sort=-x sorts by x descending')
  const names = sort.split(',')
  const orders = order === undefined ? [] : order.split(',').map((text) => text.toLowerCase())
  if (orders.length > names.length) return context.refuse('_order', `names ${orders.length} orders for ${names.length} _sort fields`)
  if (orders.some((text) => text !== 'asc' && text !== 'desc')) return context.refuse('_order', 'must be asc or desc, one per _sort field, comma-separated')
  const spec = context.target.collection as CollectionSpec
  const keys: string[] = []
  for (const [at, name] of names.entries()) {
    const descending = orders[at] === 'desc'
    const field = spec.fields.get(name)
    const threadline = `sort=${descending ? '-' : ''}${name}`
    if (name.startsWith('-')) {
      context.refuse('_sort', `"${name}": json-server 0.17 reads no "-" (it would not sort); _sort=${name.slice(1)}&_order=desc, or sort=${name}`)
    } else if (field?.nullable === true) {
      context.refuse(
        '_sort',
        `"${name}" may be missing: json-server sorts missing values last ascending and first descending, Threadline the other way round: ${threadline} in Threadline's order`,
      )
    } else if (field?.caseInsensitive === true) {
      context.refuse('_sort', `"${name}" is sorted without regard to case here, with case by json-server: ${threadline} in Threadline's order`)
    }
    keys.push(`${descending ? '-' : ''}${name}`)
  }
  // json-server's sort is stable: ties stay in the data's order, the ids'. Threadline breaks ties
  // by id in the direction of the last field.
  if (orders[names.length - 1] === 'desc' && !names.includes(spec.id.name)) keys.push(spec.id.name)
  context.set('sort', keys.join(','), '_sort')
}

const OPERATOR_WORD = /^(.+)_(gte|lte|ne|like|gt|lt)$/

/** `x_gte`, `x_lte`, `x_ne` (read), `x_like`, `x_gt`, `x_lt` (refused), each key on its own. */
const operators: Handler = (context, keys) => {
  const spec = context.target.collection as CollectionSpec
  for (const key of keys) {
    const [, name = '', operator = ''] = OPERATOR_WORD.exec(key) ?? []
    const field = spec.fields.get(name)
    const threadline = `${name}[${operator}]`
    if (operator === 'like') {
      const searchable = spec.defaultSearchFields.map((f) => f.name)
      context.refuse(
        key,
        "is json-server's regular expression match, which Threadline does not have: " +
          (field?.searchable === true ? `q=text&fields=${name} finds text within ${name}` : `q=text&fields=… finds text within ${searchable.join(', ')}`),
      )
    } else if (operator === 'gt' || operator === 'lt') {
      context.refuse(key, `is json-server 1.0's, which 0.17 ignores: ${threadline}=v in Threadline`)
    } else if (field?.caseInsensitive === true) {
      context.refuse(key, `compares ${name} with case in json-server, without in Threadline: ${threadline}=v in Threadline's sense`)
    } else {
      const values = Array.isArray(context.raw[key]) ? (context.raw[key] as unknown[]) : [context.raw[key]]
      const rewritten = values.map((value) => (field === undefined || typeof value !== 'string' ? undefined : asWritten(field, operator, value)))
      const unlike = values.findIndex((value, at) => rewritten[at] !== undefined && rewritten[at] !== value)
      if (unlike >= 0) {
        context.refuse(
          key,
          `is compared as text by json-server: write it as the API does, ${String(rewritten[unlike])} (or ${threadline}, which compares values)`,
        )
        continue
      }
      context.set(threadline, context.raw[key], key)
      // json-server's _ne never matches a missing value; Threadline's ne does.
      if (operator === 'ne' && field?.nullable === true) context.set(`${name}[null]`, 'false', key)
    }
  }
}

/**
 * The value as the API writes it, where json-server's comparison of text is not Threadline's of
 * values otherwise: an instant (json-server compares it as text), an integer for `ne` (json-server
 * compares `030` as text, unequal to 30). Undefined where there is nothing to compare.
 */
function asWritten(field: FieldSpec, operator: string, value: string): string | undefined {
  if (field.nullable === true && value === 'null') return undefined
  if (field.type === 'timestamp') return parseInstant(value)
  if (field.type === 'integer' && operator === 'ne') return /^-?\d{1,10}$/.test(value) ? String(Number(value)) : undefined
  return undefined
}

/** `_expand=p`: the one relation read from the item's `pId` in the `ps` collection (json-server's foreign key suffix and plural). */
const expanding: Handler = (context) => {
  const values = ([] as unknown[]).concat(context.raw._expand)
  const relations: string[] = []
  for (const value of values) {
    const parent = String(value)
    const relation = Object.entries(context.target.references).find(
      ([, { foreignKey, resource }]) => foreignKey === `${parent}Id` && resource === `${parent}s`,
    )?.[0]
    if (relation !== undefined) {
      if (!relations.includes(relation)) relations.push(relation)
    } else {
      context.refuse('_expand', `"${parent}" names no parent here (json-server reads the ${parent}s item that ${parent}Id names): ${offered(context.target)}`)
    }
  }
  if (relations.length > 0) context.set('include', relations.join(','), '_expand')
}

/** `_embed=r`: never exact (json-server embeds every child, oldest first). */
const embedding: Handler = (context) => {
  for (const value of ([] as unknown[]).concat(context.raw._embed)) {
    const name = String(value)
    context.refuse(
      '_embed',
      Object.hasOwn(context.target.relations, name) && context.target.relations[name] === 'list'
        ? `embeds every one of the ${name} in json-server, oldest first; include=${name} embeds the newest ${DEFAULT_EMBEDDED_LIMIT} ` +
            `(${name}.limit up to ${MAX_PAGE_LIMIT}), newest first: ask for that, or read the ${name}' own list`
        : `"${name}" is not embedded here: ${offered(context.target)}`,
    )
  }
}

const offered = (target: WordTarget): string => {
  const names = Object.keys(target.relations)
  return names.length === 0 ? 'this resource embeds nothing' : `include takes ${names.join(', ')}`
}

const nested: Handler = (context, keys) => {
  const fields = [...(context.target.collection?.fields.values() ?? [])].filter((field) => field.filterable).map((field) => field.name)
  for (const key of keys) {
    context.refuse(key, `filters a property inside a property in json-server; Threadline filters the collection's own fields: ${fields.join(', ')}`)
  }
}

const READERS: Record<Reader, Handler> = { paging, sorting, operators, expanding, embedding, nested }

/** Each word's handler, and the order they run in (the table's); the keys that are words, by name and by suffix. */
const HANDLERS = new Map<JsonServerWord, Handler>()
const HANDLED_IN_ORDER: Handler[] = []
const NAMED = new Map<string, JsonServerWord>()
const SUFFIXED = new Map<string, JsonServerWord>()
let NESTED: JsonServerWord | undefined
for (const word of JSON_SERVER_WORDS) {
  const { match, read } = word
  if (match === undefined || read === undefined) continue
  const handler: Handler =
    typeof read === 'string'
      ? READERS[read]
      : (context, keys) => {
          for (const key of keys) context.refuse(key, read.refusal)
        }
  HANDLERS.set(word, handler)
  if (!HANDLED_IN_ORDER.includes(handler)) HANDLED_IN_ORDER.push(handler)
  if ('names' in match) for (const name of match.names) NAMED.set(name, word)
  else if ('suffixes' in match) for (const suffix of match.suffixes) SUFFIXED.set(suffix, word)
  else NESTED = word
}

/** Whether the query key is one of json-server's words on this route (and judged by translateJsonServerWords). */
export const isJsonServerWord = (target: WordTarget, key: string): boolean => wordOf(target, key) !== undefined

/** The word a query key is, on this route; undefined for a field of the collection (`x`, `x[op]`) or any other key. */
function wordOf(target: WordTarget, key: string): JsonServerWord | undefined {
  const spec = target.collection
  const named = NAMED.get(key)
  if (spec === undefined) return named?.on === 'lists and items' ? named : undefined
  const bracket = key.indexOf('[')
  if (spec.fields.has(bracket < 0 ? key : key.slice(0, bracket))) return undefined
  if (named !== undefined) return named
  const operator = OPERATOR_WORD.exec(key)
  if (operator !== null) return SUFFIXED.get(`_${operator[2]}`)
  return key.includes('.') && !key.endsWith('.limit') ? NESTED : undefined
}
